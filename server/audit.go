package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// Audit appends one JSON line per decided request, and one per outcome, to
// the audit log. A line is written before the action it records runs; when
// it cannot be written the action does not run.
type Audit struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// OpenAudit opens (creating it and its folder, private to the user) the log.
func OpenAudit(path string) (*Audit, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Audit{f: f, path: path}, nil
}

// Path is the log's path.
func (a *Audit) Path() string { return a.path }

// Close closes the log.
func (a *Audit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}

// decisionLine is one decided request.
type decisionLine struct {
	Time        string             `json:"time"`
	Event       string             `json:"event"`
	Call        string             `json:"call"`
	Session     string             `json:"session"`
	Tool        string             `json:"tool"`
	Capability  grants.Capability  `json:"capability,omitempty"`
	Target      grants.Target      `json:"target"`
	Risk        string             `json:"risk_level,omitempty"`
	Surface     grants.Surface     `json:"execution_surface,omitempty"`
	DataClasses []grants.DataClass `json:"data_classes,omitempty"`
	Effect      string             `json:"effect"`
	Reason      grants.Reason      `json:"reason_code"`
	RuleID      string             `json:"rule_id,omitempty"`
	// Channel is how a person's answer came (elicitation, console, memory),
	// on decisions that were asked.
	Channel string `json:"approval_channel,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// outcomeLine records what an allowed call did.
type outcomeLine struct {
	Time       string `json:"time"`
	Event      string `json:"event"`
	Call       string `json:"call"`
	Session    string `json:"session"`
	Tool       string `json:"tool"`
	DurationMS int64  `json:"duration_ms"`
	toolkit.Outcome
}

// callRef identifies one tool call in the log.
type callRef struct {
	id, session, tool string
	channel           string // how an ask was answered, if one was
}

// Decisions writes one line per decision of a call, in one write.
func (a *Audit) Decisions(c callRef, ds []grants.Decision) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	var buf []byte
	for _, d := range ds {
		line, err := json.Marshal(decisionLine{
			Time: now, Event: "decision", Call: c.id, Session: c.session, Tool: c.tool,
			Capability: d.Request.Capability, Target: d.Request.Target, Risk: riskName(d.Request.Risk),
			Surface: d.Request.Surface, DataClasses: d.Request.DataClasses,
			Effect: d.Effect.String(), Reason: d.Reason, RuleID: d.RuleID, Channel: askedChannel(c, d),
		})
		if err != nil {
			return err
		}
		buf = append(append(buf, line...), '\n')
	}
	return a.write(buf)
}

// Invalid records a call refused for its arguments.
func (a *Audit) Invalid(c callRef, detail string) error {
	return a.Refused(c, grants.ReasonInvalidArguments, detail)
}

// Refused records a call refused before any request was decided.
func (a *Audit) Refused(c callRef, reason grants.Reason, detail string) error {
	line, err := json.Marshal(decisionLine{
		Time: time.Now().UTC().Format(time.RFC3339Nano), Event: "decision", Call: c.id, Session: c.session,
		Tool: c.tool, Effect: grants.Deny.String(), Reason: reason, Detail: detail,
	})
	if err != nil {
		return err
	}
	return a.write(append(line, '\n'))
}

// Outcome records what a call that ran did.
func (a *Audit) Outcome(c callRef, d time.Duration, o toolkit.Outcome) error {
	line, err := json.Marshal(outcomeLine{
		Time: time.Now().UTC().Format(time.RFC3339Nano), Event: "outcome", Call: c.id, Session: c.session,
		Tool: c.tool, DurationMS: d.Milliseconds(), Outcome: o,
	})
	if err != nil {
		return err
	}
	return a.write(append(line, '\n'))
}

func (a *Audit) write(b []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.f.Write(b); err != nil {
		return fmt.Errorf("audit log %s: %w", a.path, err)
	}
	return nil
}

// askedChannel is the approval channel for a decision a person settled.
func askedChannel(c callRef, d grants.Decision) string {
	switch d.Reason {
	case grants.ReasonApproved, grants.ReasonApprovedForSession, grants.ReasonDeclined, grants.ReasonCancelled, grants.ReasonApprovalTimeout:
		return c.channel
	}
	return ""
}

func riskName(r grants.Risk) string {
	if r == 0 {
		return ""
	}
	return r.String()
}
