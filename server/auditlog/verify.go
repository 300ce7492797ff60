package auditlog

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/sys/unix"
)

// Bad names the first record that does not verify.
type Bad struct {
	Line int    // 1-based line of the file
	Seq  uint64 // the record's seq (as it should be)
	Msg  string
}

func (b *Bad) Error() string { return fmt.Sprintf("record %d (line %d): %s", b.Seq, b.Line, b.Msg) }

// Report is what Verify found.
type Report struct {
	Records     int    // lines read
	First, Next uint64 // seq of the first record, and after the last
	Checkpoints int
	Unsigned    uint64 // records after the last checkpoint
	Bad         *Bad   // nil when every record verifies
}

// VerifyOptions say what to check against.
type VerifyOptions struct {
	Verifier note.Verifier // checkpoint signatures
	// Kept is the last checkpoint the server kept beside its key (nil when
	// there is none): a file that ends before it, or disagrees with it,
	// was cut or changed.
	Kept []byte
}

// Verify reads a whole log and checks every record's chain and every
// checkpoint's signature and root.
func Verify(r io.Reader, opts VerifyOptions) (Report, error) {
	w := walker{verifiers: note.VerifierList(opts.Verifier)}
	var rep Report
	var kept *chainFields
	if opts.Kept != nil {
		c, err := parseChain(trimNewline(opts.Kept))
		if err != nil {
			return rep, fmt.Errorf("the kept checkpoint: %v", err)
		}
		kept = &c
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			line, err = readLong(br, line)
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return rep, err
		}
		rep.Records++
		bad := func(msg string) *Bad { return &Bad{Line: rep.Records, Seq: w.h.seq, Msg: msg} }
		if line[len(line)-1] != '\n' {
			rep.Bad = bad("torn: the last line has no newline (the file was cut)")
			return rep, nil
		}
		line = line[:len(line)-1]
		c, serr := w.step(line)
		if serr != nil {
			var changed *changedError
			switch {
			case errors.As(serr, &changed):
				rep.Bad = &Bad{Line: rep.Records - 1, Seq: changed.seq, Msg: "changed: its hash is not the prev of the next record"}
			case !w.started:
				rep.Bad = &Bad{Line: 1, Msg: serr.Error()}
				if c.Seq != nil {
					rep.Bad.Seq = *c.Seq
				}
			default:
				rep.Bad = bad(serr.Error())
			}
			return rep, nil
		}
		if rep.Records == 1 {
			rep.First = *c.Seq
		}
		if c.isCheckpoint() {
			rep.Checkpoints++
		}
		if kept != nil && *kept.Seq == *c.Seq && !bytes.Equal(line, trimNewline(opts.Kept)) {
			rep.Bad = &Bad{Line: rep.Records, Seq: *c.Seq, Msg: "differs from the checkpoint the server kept beside its key"}
			return rep, nil
		}
	}
	rep.Next = w.h.seq
	rep.Unsigned = w.h.seq - w.signedSeq
	if rep.Records == 0 {
		rep.Bad = &Bad{Line: 1, Msg: "the log is empty"}
		return rep, nil
	}
	if kept != nil && *kept.Seq >= rep.Next {
		rep.Bad = &Bad{Line: rep.Records + 1, Seq: rep.Next,
			Msg: fmt.Sprintf("missing: the log ends before the checkpoint at seq %d that the server kept beside its key (records %d..%d were cut off)", *kept.Seq, rep.Next, *kept.Seq)}
	}
	return rep, nil
}

// readLong finishes a line longer than the reader's buffer.
func readLong(br *bufio.Reader, first []byte) ([]byte, error) {
	line := append([]byte(nil), first...)
	rest, err := br.ReadBytes('\n')
	return append(line, rest...), err
}

// Proof is an inclusion proof of one record in a signed checkpoint:
// checkable with only the public key.
type Proof struct {
	Seq        uint64   `json:"seq"`
	Record     string   `json:"record"`
	TreeSize   uint64   `json:"tree_size"`
	Checkpoint string   `json:"checkpoint"`
	Hashes     []string `json:"hashes"`
}

// Prove builds the inclusion proof of record seq against the last
// checkpoint of the log read from r (which must verify with v).
func Prove(r io.Reader, seq uint64, v note.Verifier) (*Proof, error) {
	var leaves [][]byte
	w := walker{verifiers: note.VerifierList(v), leaves: &leaves}
	var base *compact.Range
	var record []byte
	var last chainFields
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: torn (no newline)", n)
		}
		line = line[:len(line)-1]
		c, err := w.step(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v (run audit verify)", n, err)
		}
		if n == 1 {
			if base, err = c.treeRange(); err != nil {
				return nil, err
			}
		}
		if *c.Seq == seq {
			record = line
		}
		if c.isCheckpoint() {
			last = c
		}
	}
	if base == nil {
		return nil, fmt.Errorf("the log is empty")
	}
	if record == nil {
		return nil, fmt.Errorf("record %d is not in this file (it holds %d..%d)", seq, base.End(), w.h.seq-1)
	}
	if last.Seq == nil || *last.Seq <= seq {
		return nil, fmt.Errorf("no checkpoint covers record %d yet (checkpoints come every few records, every minute and at shutdown)", seq)
	}
	size := *last.Seq
	nodes, err := proof.Inclusion(seq, size)
	if err != nil {
		return nil, err
	}
	t := tree{base: base, leaves: leaves}
	hashes := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		if hashes[i], err = t.node(id); err != nil {
			return nil, err
		}
	}
	hashes, err = nodes.Rehash(hashes, rfc6962.DefaultHasher.HashChildren)
	if err != nil {
		return nil, err
	}
	p := &Proof{Seq: seq, Record: string(record), TreeSize: size, Checkpoint: last.Checkpoint}
	for _, h := range hashes {
		p.Hashes = append(p.Hashes, hex.EncodeToString(h))
	}
	return p, nil
}

// tree computes node hashes from the leaves of one file and the compact
// range its first checkpoint carries for the records before it.
type tree struct {
	base   *compact.Range // [0, first)
	leaves [][]byte       // leaf hashes from base.End() on
}

func (t tree) node(id compact.NodeID) ([]byte, error) {
	begin, end := id.Coverage()
	first := t.base.End()
	switch {
	case begin >= first:
		if end-first > uint64(len(t.leaves)) {
			return nil, fmt.Errorf("node %v lies beyond the records", id)
		}
		r := rangeFactory.NewEmptyRange(begin)
		for _, lh := range t.leaves[begin-first : end-first] {
			r.Append(lh, nil)
		}
		return r.Hashes()[0], nil
	case end <= first:
		for i, bid := range compact.RangeNodes(0, first, nil) {
			if bid == id {
				return t.base.Hashes()[i], nil
			}
		}
		if id.Level == 0 {
			return nil, fmt.Errorf("record %d lies before this file", begin)
		}
	}
	left, err := t.node(compact.NewNodeID(id.Level-1, id.Index*2))
	if err != nil {
		return nil, err
	}
	right, err := t.node(compact.NewNodeID(id.Level-1, id.Index*2+1))
	if err != nil {
		return nil, err
	}
	return rfc6962.DefaultHasher.HashChildren(left, right), nil
}

// VerifyProof checks an inclusion proof with only the public key.
func VerifyProof(data []byte, v note.Verifier) (*Proof, error) {
	var p Proof
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("proof: %v", err)
	}
	cp, err := openCheckpoint(p.Checkpoint, note.VerifierList(v))
	if err != nil {
		return nil, err
	}
	if cp.size != p.TreeSize {
		return nil, fmt.Errorf("proof: the checkpoint names tree size %d, the proof %d", cp.size, p.TreeSize)
	}
	c, err := parseChain([]byte(p.Record))
	if err != nil {
		return nil, fmt.Errorf("proof record: %v", err)
	}
	if *c.Seq != p.Seq {
		return nil, fmt.Errorf("proof: the record is seq %d, the proof is for %d", *c.Seq, p.Seq)
	}
	hashes := make([][]byte, len(p.Hashes))
	for i, h := range p.Hashes {
		if hashes[i], err = hex.DecodeString(h); err != nil || len(hashes[i]) != 32 {
			return nil, fmt.Errorf("proof hash %d is not a SHA-256", i)
		}
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, p.Seq, p.TreeSize, leafHash([]byte(p.Record)), hashes, cp.root); err != nil {
		return nil, fmt.Errorf("proof does not verify: %v", err)
	}
	return &p, nil
}

// Snapshot opens the log at path for reading as it stands now: its size
// is taken under the writers' lock, so a record being appended meanwhile is
// not read half-written.
func Snapshot(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: lock: %w", path, err)
	}
	fi, err := f.Stat()
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if err != nil {
		f.Close()
		return nil, err
	}
	return snapshot{Reader: io.LimitReader(f, fi.Size()), Closer: f}, nil
}

type snapshot struct {
	io.Reader
	io.Closer
}
