package metrics

// Server is the set of metrics the server keeps.
type Server struct {
	Registry *Registry
	// Calls counts tool calls by tool and outcome (ok, tool_error,
	// refused, invalid_arguments).
	Calls *Counter
	// Decisions counts decided requests by effect and reason code.
	Decisions *Counter
	// PendingApprovals is the number of asks waiting for a person.
	PendingApprovals *Gauge
	// ApprovalWait is how long a person took, by outcome reason.
	ApprovalWait *Histogram
	// CommandDuration is how long commands ran, by exit (ok, failed, timeout).
	CommandDuration *Histogram
	// SandboxStart is the time from starting the sandbox to the command
	// running (for a helper started in advance: from handing it the
	// command).
	SandboxStart *Histogram
	// AuditFailures counts audit records that could not be written.
	AuditFailures *Counter
}

// NewServer registers the server's metrics in a new registry.
func NewServer() *Server {
	r := &Registry{}
	return &Server{
		Registry:         r,
		Calls:            r.NewCounter("onellm_tool_calls_total", "Tool calls by tool and outcome.", "tool", "outcome"),
		Decisions:        r.NewCounter("onellm_decisions_total", "Decided requests by effect and reason code.", "effect", "reason"),
		PendingApprovals: r.NewGauge("onellm_pending_approvals", "Asks waiting for a person."),
		ApprovalWait:     r.NewHistogram("onellm_approval_wait_seconds", "Time a person took to answer an ask, by reason.", DefaultSeconds(), "reason"),
		CommandDuration:  r.NewHistogram("onellm_command_duration_seconds", "Time commands ran, by result.", DefaultSeconds(), "result"),
		SandboxStart:     r.NewHistogram("onellm_sandbox_start_seconds", "Time from starting the sandbox to the command running.", DefaultSeconds()),
		AuditFailures:    r.NewCounter("onellm_audit_write_failures_total", "Audit records that could not be written (the action did not run)."),
	}
}
