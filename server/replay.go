package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// ReplayVerdict is one side of a replayed decision: what the policy said.
type ReplayVerdict struct {
	Effect string        `json:"effect"`
	Reason grants.Reason `json:"reason_code"`
	RuleID string        `json:"rule_id,omitempty"`
}

// ReplayChange is a recorded decision the new policy decides otherwise.
type ReplayChange struct {
	Seq        uint64            `json:"seq"`
	Time       string            `json:"time"`
	Tool       string            `json:"tool"`
	Capability grants.Capability `json:"capability"`
	Target     grants.Target     `json:"target"`
	Request    string            `json:"request"` // as refusals describe it
	Old        ReplayVerdict     `json:"old"`
	New        ReplayVerdict     `json:"new"`
	// Answer is how the old ask was settled (approved, declined, …), when
	// it was one.
	Answer string `json:"answer,omitempty"`
	// ApprovalNowDenied: a person approved this, and the new policy would
	// deny it.
	ApprovalNowDenied bool `json:"approval_now_denied,omitempty"`
}

// ReplayReport is what a replay found.
type ReplayReport struct {
	Replayed int            `json:"replayed"`
	Skipped  int            `json:"skipped"` // decisions that cannot be rebuilt (no request, a field cut to the record bound)
	Changes  []ReplayChange `json:"changes"`
}

// replayRecord is a decision record as the log holds it.
type replayRecord struct {
	Seq uint64 `json:"seq"`
	decisionLine
}

// Replay decides every decision recorded in the audit log r (from since
// on) again under p, and reports those whose effect changes. The old
// effect is the policy's: an ask a person answered counts as ask.
func Replay(r io.Reader, p *grants.Policy, since time.Time) (ReplayReport, error) {
	rep := ReplayReport{Changes: []ReplayChange{}}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			return rep, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return rep, err
		}
		var rec replayRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return rep, fmt.Errorf("line %d: %v (check the log with `audit verify`)", n, err)
		}
		if rec.Event != "decision" {
			continue
		}
		if !since.IsZero() {
			if t, err := time.Parse(time.RFC3339Nano, rec.Time); err != nil || t.Before(since) {
				continue
			}
		}
		req, ok := rebuild(rec.decisionLine, p)
		if !ok {
			rep.Skipped++
			continue
		}
		rep.Replayed++
		old := oldVerdict(rec.decisionLine)
		d := p.Decide(req)
		if rec.Stage == grants.StageExec.String() {
			d = p.DecideExec(req) // a program a running command started
		}
		if d.Effect.String() == old.Effect {
			continue
		}
		c := ReplayChange{Seq: rec.Seq, Time: rec.Time, Tool: rec.Tool, Capability: req.Capability, Target: req.Target,
			Request: req.Describe(), Old: old, New: ReplayVerdict{Effect: d.Effect.String(), Reason: d.Reason, RuleID: d.RuleID}}
		if old.Reason != rec.Reason {
			c.Answer = string(rec.Reason)
			if rec.Channel != "" {
				c.Answer += " (" + rec.Channel + ")"
			}
			c.ApprovalNowDenied = rec.Effect == grants.Allow.String() && d.Effect == grants.Deny
		}
		rep.Changes = append(rep.Changes, c)
	}
}

// oldVerdict is what the recording policy decided: a decision a person
// settled was an ask of the rule recorded.
func oldVerdict(rec decisionLine) ReplayVerdict {
	switch rec.Reason {
	case grants.ReasonApproved, grants.ReasonApprovedForSession, grants.ReasonDeclined, grants.ReasonCancelled,
		grants.ReasonApprovalTimeout, grants.ReasonApprovalUnavailable:
		return ReplayVerdict{Effect: grants.Ask.String(), Reason: grants.ReasonMatchedAsk, RuleID: rec.RuleID}
	}
	return ReplayVerdict{Effect: rec.Effect, Reason: rec.Reason, RuleID: rec.RuleID}
}

// rebuild makes the request a recorded decision decided, as the tool would
// make it under p: a file path is workspace.files.* or filesystem.* by p's
// workspace.
func rebuild(rec decisionLine, p *grants.Policy) (grants.Request, bool) {
	if !rec.Capability.Known() || cutToBound(rec.Target) {
		return grants.Request{}, false
	}
	req := grants.Request{Capability: rec.Capability, Target: rec.Target, Surface: rec.Surface,
		DataClasses: rec.DataClasses, Private: rec.Private}
	if r, ok := grants.ParseRisk(rec.Risk); ok {
		req.Risk = r
	}
	if req.Capability.IsFile() {
		if c := fileCapabilityIn(p, req.Capability, req.Target.Path); c != req.Capability {
			if req.Risk == grants.BaseRisk(req.Capability, req.Surface) {
				req.Risk = grants.BaseRisk(c, req.Surface)
			}
			req.Capability = c
		}
	}
	return req, true
}

// fileCapabilityIn is the file capability for the same operation on path
// under p's workspace.
func fileCapabilityIn(p *grants.Policy, c grants.Capability, path string) grants.Capability {
	op := c[strings.LastIndexByte(string(c), '.')+1:]
	if p.InWorkspace(path) {
		return grants.Capability("workspace.files." + op)
	}
	return grants.Capability("filesystem." + op)
}

// cutToBound reports whether a target field was shortened to the record
// bound (then the request cannot be rebuilt exactly).
func cutToBound(t grants.Target) bool {
	for _, f := range []string{t.Path, t.Host, t.Resource, t.Command, t.Option} {
		if strings.Contains(f, " bytes, sha256:") && strings.Contains(f, "…[") {
			return true
		}
	}
	return false
}
