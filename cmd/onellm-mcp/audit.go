package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/server"
	"github.com/onellm/onellm-mcp/server/auditlog"
)

const auditUsage = `usage:
  onellm-mcp audit verify [--config F] [--audit FILE] [--key PUB] [--proof FILE]
      check every record's chain and every checkpoint's signature and root
      (exit 0 clean, 1 tampered, 2 usage); with --proof, check an inclusion
      proof with only the public key
  onellm-mcp audit prove  [--config F] [--audit FILE] --seq N
      print an inclusion proof of record N against the latest checkpoint
  onellm-mcp audit key    [--config F]
      print the public key that checkpoints are signed with
  onellm-mcp audit replay --config NEW [--audit FILE] [--since TIME] [--json]
      decide every recorded request again under NEW and print what changes
      (exit 0 no change, 1 changes, 2 usage)
`

// exitUsage is the exit code for bad usage or a config that does not load.
const exitUsage = 2

// runAudit runs an `audit` subcommand and returns the exit code.
func runAudit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return exitUsage
	}
	var code int
	var err error
	switch args[0] {
	case "verify":
		code, err = auditVerify(args[1:], stdout, stderr)
	case "prove":
		code, err = auditProve(args[1:], stdout, stderr)
	case "key":
		code, err = auditKey(args[1:], stdout, stderr)
	case "replay":
		code, err = auditReplay(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, auditUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "onellm-mcp audit: unknown subcommand %q\n%s", args[0], auditUsage)
		return exitUsage
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "onellm-mcp audit %s: %v\n", args[0], err)
	}
	return code
}

// auditFlags are the flags every audit subcommand takes.
type auditFlags struct {
	fs     *flag.FlagSet
	config *string
	audit  *string
}

func newAuditFlags(name string, stderr io.Writer) auditFlags {
	fs, cfg := newFlags("audit "+name, stderr)
	return auditFlags{fs: fs, config: cfg, audit: fs.String("audit", "", "the audit log (default: [audit] path of the config)")}
}

// parse parses args and loads the policy that locates the log and the key.
func (a auditFlags) parse(args []string, stderr io.Writer) (*grants.Policy, string, error) {
	if err := a.fs.Parse(args); err != nil {
		return nil, "", err
	}
	if a.fs.NArg() > 0 {
		return nil, "", fmt.Errorf("unexpected argument %q", a.fs.Arg(0))
	}
	p, err := loadPolicy(*a.config, stderr, false)
	if err != nil {
		return nil, "", err
	}
	path := p.AuditPath
	if *a.audit != "" {
		if path, err = filepath.Abs(*a.audit); err != nil {
			return nil, "", err
		}
	}
	return p, path, nil
}

// keyDir is where the server keeps the audit key and last checkpoint (the
// same folder the server uses; reading it needs no reach check).
func keyDir(p *grants.Policy) string { return grants.StateDir(p.Home) }

// verifierFor is the --key given, or the local public key.
func verifierFor(flagKey string, p *grants.Policy) (note.Verifier, error) {
	if flagKey != "" {
		return auditlog.ParseVerifier(flagKey)
	}
	vkey, err := auditlog.LoadVerifier(keyDir(p))
	if err != nil {
		return nil, fmt.Errorf("%v (the server makes the key at first start; or give --key)", err)
	}
	return auditlog.ParseVerifier(vkey)
}

func auditVerify(args []string, stdout, stderr io.Writer) (int, error) {
	a := newAuditFlags("verify", stderr)
	key := a.fs.String("key", "", "public key (as `audit key` prints it, or a file holding it); default the local key")
	proofFile := a.fs.String("proof", "", "check this inclusion proof (from `audit prove`) instead of the log")
	p, path, err := a.parse(args, stderr)
	if err != nil {
		return exitUsage, err
	}
	v, err := verifierFor(*key, p)
	if err != nil {
		return exitUsage, err
	}
	if *proofFile != "" {
		data, err := os.ReadFile(*proofFile)
		if err != nil {
			return exitUsage, err
		}
		pr, err := auditlog.VerifyProof(data, v)
		if err != nil {
			fmt.Fprintf(stdout, "proof %s: DOES NOT VERIFY: %v\n", *proofFile, err)
			return 1, nil
		}
		fmt.Fprintf(stdout, "proof %s: ok: record %d is in the log of tree size %d signed by %s\n%s\n", *proofFile, pr.Seq, pr.TreeSize, v.Name(), pr.Record)
		return 0, nil
	}
	f, err := auditlog.Snapshot(path)
	if err != nil {
		return exitUsage, err
	}
	defer f.Close()
	kept, err := os.ReadFile(auditlog.KeptCheckpointFile(keyDir(p), path))
	if err != nil {
		kept = nil // no server kept a checkpoint for this path
	}
	rep, err := auditlog.Verify(f, auditlog.VerifyOptions{Verifier: v, Kept: kept})
	if err != nil {
		return exitUsage, err
	}
	if rep.Bad != nil {
		fmt.Fprintf(stdout, "audit log %s: TAMPERED: %v\n", path, rep.Bad)
		return 1, nil
	}
	fmt.Fprintf(stdout, "audit log %s: ok: %d records (seq %d..%d), %d signed checkpoints\n", path, rep.Records, rep.First, rep.Next-1, rep.Checkpoints)
	if rep.First > 0 {
		fmt.Fprintf(stdout, "note: this file continues the chain at seq %d; an earlier (rotated) file holds the records before\n", rep.First)
	}
	if rep.Unsigned > 0 {
		fmt.Fprintf(stdout, "note: the last %d records (seq %d..%d) are chained but not yet signed; a running server signs them within %s or at shutdown\n",
			rep.Unsigned, rep.Next-rep.Unsigned, rep.Next-1, p.Audit.CheckpointInterval)
	}
	return 0, nil
}

func auditProve(args []string, stdout, stderr io.Writer) (int, error) {
	a := newAuditFlags("prove", stderr)
	seq := a.fs.String("seq", "", "the record's seq")
	p, path, err := a.parse(args, stderr)
	if err != nil {
		return exitUsage, err
	}
	n, err := strconv.ParseUint(*seq, 10, 64)
	if err != nil {
		return exitUsage, fmt.Errorf("--seq N is required (a record's seq)")
	}
	v, err := verifierFor("", p)
	if err != nil {
		return exitUsage, err
	}
	var pr *auditlog.Proof
	err = readLog(path, func(r io.Reader) (err error) {
		pr, err = auditlog.Prove(r, n, v)
		return err
	})
	if errors.Is(err, os.ErrNotExist) {
		return exitUsage, err
	}
	if err != nil {
		return 1, err
	}
	return 0, writeJSON(stdout, pr)
}

func auditKey(args []string, stdout, stderr io.Writer) (int, error) {
	a := newAuditFlags("key", stderr)
	p, _, err := a.parse(args, stderr)
	if err != nil {
		return exitUsage, err
	}
	vkey, err := auditlog.LoadVerifier(keyDir(p))
	if err != nil {
		return 1, fmt.Errorf("%v (the server makes the key at first start)", err)
	}
	fmt.Fprintln(stdout, vkey)
	return 0, nil
}

func auditReplay(args []string, stdout, stderr io.Writer) (int, error) {
	a := newAuditFlags("replay", stderr)
	since := a.fs.String("since", "", "only decisions from TIME on (RFC 3339, a date 2006-01-02, or a duration such as 24h back from now)")
	asJSON := a.fs.Bool("json", false, "print the report as JSON")
	p, path, err := a.parse(args, stderr)
	if err != nil {
		return exitUsage, err
	}
	if *a.config == "" {
		return exitUsage, fmt.Errorf("--config NEW is required: the policy to decide the recorded requests under")
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return exitUsage, err
	}
	var rep server.ReplayReport
	if err := readLog(path, func(r io.Reader) (err error) {
		rep, err = server.Replay(r, p, from)
		return err
	}); err != nil {
		return exitUsage, err
	}
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return exitUsage, err
		}
	} else {
		printReplay(stdout, rep, *a.config)
	}
	if len(rep.Changes) > 0 {
		return 1, nil
	}
	return 0, nil
}

func printReplay(w io.Writer, rep server.ReplayReport, config string) {
	denied := 0
	for _, c := range rep.Changes {
		fmt.Fprintf(w, "%s  seq %d  %s  %s\n", c.Time, c.Seq, c.Tool, c.Request)
		fmt.Fprintf(w, "    %s → %s\n", verdictText(c.Old), verdictText(c.New))
		if c.ApprovalNowDenied {
			denied++
			fmt.Fprintf(w, "    APPROVED by a person (%s); the new policy denies it\n", c.Answer)
		} else if c.Answer != "" {
			fmt.Fprintf(w, "    the ask was settled: %s\n", c.Answer)
		}
	}
	fmt.Fprintf(w, "replayed %d decisions under %s: %d change", rep.Replayed, config, len(rep.Changes))
	if denied > 0 {
		fmt.Fprintf(w, " (%d approvals a person gave would now be denied)", denied)
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "; %d skipped (no request, or a field cut to the record bound)", rep.Skipped)
	}
	fmt.Fprintln(w)
}

func verdictText(v server.ReplayVerdict) string {
	s := v.Effect + " (" + string(v.Reason)
	if v.RuleID != "" {
		s += ", rule " + v.RuleID
	}
	return s + ")"
}

// parseSince reads --since: RFC 3339, a date, or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: use RFC 3339 (2026-12-01T09:00:00Z), a date (2026-12-01) or a duration (24h)", s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// readLog runs read over a snapshot of the log at path.
func readLog(path string, read func(io.Reader) error) error {
	f, err := auditlog.Snapshot(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return read(f)
}
