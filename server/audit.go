package server

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/statedir"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/server/auditlog"
)

// Audit turns decisions and outcomes into records of the chained audit
// log (package auditlog). A record is written before the action it records
// runs; when it cannot be written the action does not run.
//
// The key and the log may be opened after the server has answered its
// first message (OpenAuditLater): every method opens them first when that
// has not succeeded yet, waiting for an open under way, and while opening
// fails returns its error, so every call is refused.
type Audit struct {
	settings grants.AuditSettings // as opened; a reload does not change them
	path     string
	// stateDir is where its key and last checkpoint are kept, when that
	// folder was proven out of every root ("" when it is only hidden).
	stateDir string

	open   func() (*auditlog.Log, error) // the key and the log (OpenAuditLater)
	opened atomic.Pointer[auditlog.Log]
	mu     sync.Mutex // held while opening
	closed bool
}

// OpenAudit opens the policy's audit log, signing its checkpoints with the
// key in the user's state folder (made at first start). No tool may read
// the key (it would let a tool sign a forged log): the folder is proven out
// of every root (StateDir), or, when a root reaches it (a workspace holding
// the home folder), it is the folder every file request is refused in
// (protected_path) and that commands do not see (hidden in the sandbox).
func OpenAudit(p *grants.Policy, logger *log.Logger) (*Audit, error) {
	a, err := OpenAuditLater(p, logger)
	if err != nil {
		return nil, err
	}
	if _, err := a.ready(); err != nil {
		return nil, err
	}
	return a, nil
}

// OpenAuditLater is OpenAudit that decides the state folder now (a folder
// that cannot be kept from the tools refuses start-up) and reads the key
// and opens the log on first use (Open; the server's start after its
// first answer). Its ed25519 set-up alone is ~1 ms of a fresh process.
func OpenAuditLater(p *grants.Policy, logger *log.Logger) (*Audit, error) {
	dir, err := StateDir(p)
	proven := err == nil
	if errors.Is(err, statedir.ErrReachable) && p.StateDir != "" {
		dir, err = p.StateDir, nil
		if logger != nil {
			logger.Printf("audit signing key: kept in %s, which a tool root reaches; it stays hidden from commands and refused to every tool", dir)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("audit signing key: %w", err)
	}
	a := &Audit{settings: p.Audit, path: p.AuditPath}
	if proven {
		a.stateDir = dir
	}
	path, settings := p.AuditPath, p.Audit
	a.open = func() (*auditlog.Log, error) {
		key, err := auditlog.LoadOrCreateKey(dir)
		if err != nil {
			return nil, err
		}
		return auditlog.Open(auditlog.Options{Path: path, Key: key, StateDir: dir, Log: logger,
			MaxRecordBytes: settings.MaxRecordBytes, CheckpointEvery: settings.CheckpointRecords,
			CheckpointInterval: settings.CheckpointInterval})
	}
	return a, nil
}

// errAuditClosed: the log was closed before anything opened it.
var errAuditClosed = errors.New("closed before it was opened")

// Open reads the key and opens the log, unless that was done; an open
// that failed (a full disk, a folder in the way) is tried again by the
// next use, and until one succeeds every record, so every call, is refused.
func (a *Audit) Open() error {
	_, err := a.ready()
	return err
}

// ready is the open log, opening it first when it is not.
func (a *Audit) ready() (*auditlog.Log, error) {
	if l := a.opened.Load(); l != nil {
		return l, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if l := a.opened.Load(); l != nil {
		return l, nil
	}
	if a.closed {
		return nil, fmt.Errorf("the audit log %s: %w", a.path, errAuditClosed)
	}
	l, err := a.open()
	if err != nil {
		return nil, fmt.Errorf("the audit log could not be opened: %w", err)
	}
	a.opened.Store(l)
	return l, nil
}

// Path is the log's path.
func (a *Audit) Path() string { return a.path }

// Reopen opens the log's path again (after rotation; SIGHUP).
func (a *Audit) Reopen() error {
	l, err := a.ready()
	if err != nil {
		return err
	}
	return l.Reopen()
}

// Close writes a last checkpoint and closes the log. A log never opened
// stays unopened (nothing was recorded), and is not opened after.
func (a *Audit) Close() error {
	a.mu.Lock()
	a.closed = true
	l := a.opened.Load()
	a.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.Close()
}

// appendRecords writes records to the log, in one write.
func (a *Audit) appendRecords(bodies ...[]byte) error {
	l, err := a.ready()
	if err != nil {
		return err
	}
	return l.Append(bodies...)
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
	// Stage is "hop" or "exec" for a request decided while the action ran
	// (an exec is decided by DecideExec; replay needs it).
	Stage string `json:"stage,omitempty"`
	// Private: the host resolved to a non-public address (replay needs it).
	Private bool          `json:"private,omitempty"`
	Effect  string        `json:"effect"`
	Reason  grants.Reason `json:"reason_code"`
	RuleID  string        `json:"rule_id,omitempty"`
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
	stage             string // "hop" or "exec" for a request decided while the action ran
	detail            string // what a decision's record adds (an exec allowed as an approved one's plumbing)
}

// Decisions writes one record per decision of a call, in one write.
func (a *Audit) Decisions(c callRef, ds []grants.Decision) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	bodies := make([][]byte, 0, len(ds))
	buf := make([]byte, 0, 384*len(ds))
	for _, d := range ds {
		line := decisionLine{
			Time: now, Event: "decision", Call: c.id, Session: c.session, Tool: c.tool,
			Capability: d.Request.Capability, Target: d.Request.Target, Risk: riskName(d.Request.Risk),
			Surface: d.Request.Surface, DataClasses: d.Request.DataClasses, Private: d.Request.Private, Stage: c.stage,
			Effect: d.Effect.String(), Reason: d.Reason, RuleID: d.RuleID, Channel: askedChannel(c, d), Detail: c.detail,
		}
		start := len(buf)
		buf = line.appendJSON(buf)
		bodies = append(bodies, buf[start:len(buf):len(buf)])
	}
	return a.appendRecords(bodies...)
}

// Invalid records a call refused for its arguments.
func (a *Audit) Invalid(c callRef, detail string) error {
	return a.Refused(c, grants.ReasonInvalidArguments, detail)
}

// Refused records a call refused before any request was decided.
func (a *Audit) Refused(c callRef, reason grants.Reason, detail string) error {
	line := decisionLine{
		Time: time.Now().UTC().Format(time.RFC3339Nano), Event: "decision", Call: c.id, Session: c.session,
		Tool: c.tool, Effect: grants.Deny.String(), Reason: reason, Detail: detail,
	}
	return a.appendRecords(line.appendJSON(nil))
}

// Outcome records what a call that ran did.
func (a *Audit) Outcome(c callRef, d time.Duration, o toolkit.Outcome) error {
	line := outcomeLine{
		Time: time.Now().UTC().Format(time.RFC3339Nano), Event: "outcome", Call: c.id, Session: c.session,
		Tool: c.tool, DurationMS: d.Milliseconds(), Outcome: o,
	}
	return a.appendRecords(line.appendJSON(make([]byte, 0, 256)))
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
