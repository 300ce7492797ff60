package auditlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/sys/unix"
)

// Defaults for checkpoints.
const (
	DefaultCheckpointEvery    = 1000
	DefaultCheckpointInterval = time.Minute
)

// Options configure a Log.
type Options struct {
	Path string // the audit log
	Key  *Key   // signs checkpoints
	// StateDir keeps the last checkpoint written (beside the key, out of
	// every tool's reach).
	StateDir           string
	MaxRecordBytes     int           // 0: DefaultMaxRecordBytes
	CheckpointEvery    int           // records; 0: DefaultCheckpointEvery
	CheckpointInterval time.Duration // 0: DefaultCheckpointInterval
	Log                *log.Logger   // stderr; nil discards
}

// Log is an open audit log. Its methods are safe for concurrent use.
type Log struct {
	opts Options

	mu  sync.Mutex
	f   *os.File
	dev uint64 // f's device and inode, to tell whether the path still names it
	ino uint64
	end int64 // where the last record this Log saw ends in f
	// followBuf and aheadBuf are reused for the records other writers
	// appended (follow, lookAhead); pre is what lookAhead walked.
	followBuf, aheadBuf []byte
	pre                 ahead
	othersSeen          bool // the last lock found another writer's records
	h                   head
	unsigned            int // records since the last checkpoint
	lastSign            time.Time
	failing             bool // in a failure streak (said once on stderr)
	refused             int
	closed              bool

	stop chan struct{}
	done chan struct{}
}

// Open opens (creating it and its folder, private to the user) the log at
// opts.Path and continues its chain, or the chain of the last checkpoint
// kept in opts.StateDir when that is newer.
func Open(opts Options) (*Log, error) {
	if opts.Key == nil {
		return nil, fmt.Errorf("audit log: a signing key is required")
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if opts.MaxRecordBytes < 512 {
		return nil, fmt.Errorf("audit log: max_record_bytes %d is below 512", opts.MaxRecordBytes)
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = DefaultCheckpointEvery
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = DefaultCheckpointInterval
	}
	if opts.Log == nil {
		opts.Log = log.New(io.Discard, "", 0)
	}
	l := &Log{opts: opts, h: newHead(), lastSign: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	l.mu.Lock()
	err := l.ensure()
	if err == nil {
		l.unlock()
	}
	l.mu.Unlock()
	if err != nil {
		if l.f != nil {
			l.f.Close()
		}
		return nil, err
	}
	go l.ticker()
	return l, nil
}

// Path is the log's path.
func (l *Log) Path() string { return l.opts.Path }

// Append writes bodies (JSON objects) as consecutive records in one write.
// It returns only when every record is in the file at the log's path, whole;
// on any error none of them is, and the caller must not act.
func (l *Log) Append(bodies ...[]byte) error {
	bounded := make([][]byte, len(bodies))
	for i, b := range bodies {
		var err error
		if bounded[i], err = bound(b, l.opts.MaxRecordBytes-chainPrefixMax); err != nil {
			return err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.append(bounded)
	l.report(err)
	return err
}

func (l *Log) append(bodies [][]byte) error {
	if l.closed {
		return fmt.Errorf("audit log %s is closed", l.opts.Path)
	}
	// A file unlinked between the check and the write took the records
	// with it: the path is reopened and they are written again, once.
	for attempt := 0; ; attempt++ {
		// The records are chained before the lock is taken, after the head
		// they will most likely follow (this log's, or the one lookAhead
		// walked to), so the lock is held for less; under it they are
		// chained again only when the head turned out to be another.
		l.lookAhead()
		seq, prev := l.expectedHead()
		buf, leaves, next := build(seq, prev, bodies)
		if err := l.ensure(); err != nil {
			return err
		}
		if l.h.seq != seq || l.h.prev != prev {
			buf, leaves, next = build(l.h.seq, l.h.prev, bodies)
		}
		err := l.write(buf)
		if err == nil && attempt == 0 && !l.linked() {
			l.unlock()
			l.detach()
			continue
		}
		if err == nil {
			l.advance(leaves, next)
			l.unsigned += len(bodies)
			if l.unsigned >= l.opts.CheckpointEvery {
				if cerr := l.checkpoint(); cerr != nil {
					l.opts.Log.Printf("audit log %s: checkpoint: %v", l.opts.Path, cerr)
				}
			}
		}
		l.unlock()
		return err
	}
}

// expectedHead is the head the next records will most likely follow:
// the one lookAhead walked to, else this log's.
func (l *Log) expectedHead() (uint64, [32]byte) {
	if l.pre.walked > 0 {
		return l.pre.w.h.seq, l.pre.w.h.prev
	}
	return l.h.seq, l.h.prev
}

// build chains bodies after the record seq-1 whose hash is prev.
func build(seq uint64, prev [32]byte, bodies [][]byte) (buf []byte, leaves [][]byte, next [32]byte) {
	size := 0
	for _, b := range bodies {
		size += len(b) + chainPrefixMax + 1
	}
	buf = make([]byte, 0, size)
	leaves = make([][]byte, 0, len(bodies))
	for _, b := range bodies {
		start := len(buf)
		buf = appendChained(buf, seq, prev, b)
		line := buf[start:]
		leaves = append(leaves, leafHash(line))
		prev = sha256.Sum256(line)
		seq++
		buf = append(buf, '\n')
	}
	return buf, leaves, prev
}

func (l *Log) advance(leaves [][]byte, prev [32]byte) {
	for _, lh := range leaves {
		l.h.tree.Append(lh, nil)
	}
	l.h.seq += uint64(len(leaves))
	l.h.prev = prev
}

// write appends buf at l.end; a write that does not complete is cut back,
// so no torn record stays in the file.
func (l *Log) write(buf []byte) error {
	n, err := l.f.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		err = fmt.Errorf("audit log %s: %w", l.opts.Path, err)
		if terr := l.f.Truncate(l.end); terr != nil {
			// The next append sees the size it does not expect and
			// cuts the torn tail then.
			return fmt.Errorf("%w (and the partial record could not be removed: %v)", err, terr)
		}
		return err
	}
	l.end += int64(n)
	return nil
}

// ensure makes l.f the file at the path (reopening it when it was renamed,
// removed or replaced), takes the file lock, and brings the head up to the
// file's end. On success the caller must unlock.
func (l *Log) ensure() error {
	if l.f == nil {
		return l.attach()
	}
	if err := unix.Flock(int(l.f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("audit log %s: lock: %w", l.opts.Path, err)
	}
	// One stat of the path: when it names the open file (the device and
	// inode it was opened as), that file has a name, and the size is the
	// open file's.
	fs, err := lstatPath(l.opts.Path)
	if err != nil || fs.nlink == 0 || fs.dev != l.dev || fs.ino != l.ino {
		// Renamed, removed or replaced: the path is opened again.
		l.unlock()
		l.detach()
		return l.attach()
	}
	l.othersSeen = fs.size != l.end
	if fs.size != l.end && !l.follow(fs.size) {
		// Another writer appended what does not simply continue the head
		// (or a cut was left): read the file's head again.
		if err := l.load(fs.size); err != nil {
			l.unlock()
			if errors.Is(err, errMovedAside) {
				l.detach()
				return l.attach()
			}
			return err
		}
	}
	return nil
}

// maxFollow bounds what follow reads; past it load reads from the last
// checkpoint, which is then nearer.
const maxFollow = 1 << 20

// maxFollowKept bounds the buffer follow keeps for the next time.
const maxFollowKept = 64 << 10

// follow brings the head over the records another writer appended after
// l.end, reading only those: every one must continue the chain from the
// head (seq, prev, and any checkpoint's tree), as load would check them.
// It reports false, changing nothing, when they do not, when the file is
// shorter or ends in a torn record, or when there is more than maxFollow;
// the caller then loads the file's head. Records before l.end are not read
// again: this Log wrote or checked them. Without this, every append
// after another server's re-read the records since the last checkpoint,
// so servers sharing a log slowed each other down by an order of
// magnitude. The records lookAhead walked before the lock was taken are
// not walked again when their bytes are still the file's: only the ones
// after them are.
func (l *Log) follow(size int64) bool {
	pre := l.pre
	l.pre = ahead{}
	if size <= l.end || size-l.end > maxFollow {
		return false
	}
	buf := readRecords(l.f, &l.followBuf, l.end, size)
	if buf == nil {
		return false
	}
	w, walked, rest := l.walkerAtHead(), 0, buf
	if n := pre.size - l.end; pre.from == l.end && pre.seq == l.h.seq && pre.prev == l.h.prev &&
		n > 0 && n <= int64(len(buf)) && bytes.Equal(buf[:n], pre.buf) {
		w, walked, rest = pre.w, pre.walked, buf[n:]
	}
	if !walkRecords(&w, rest, &walked) {
		return false
	}
	l.h, l.end = w.h, size
	if w.signedSeq > 0 {
		l.unsigned = int(w.h.seq - w.signedSeq)
	} else {
		l.unsigned += walked
	}
	return true
}

// ahead is what lookAhead walked without the lock: the records after from
// up to size, their bytes, the head they were walked from (seq, prev) and
// the walker after them.
type ahead struct {
	from, size int64
	buf        []byte
	seq        uint64
	prev       [32]byte
	w          walker
	walked     int
}

// lookAhead walks, before the file lock is taken, the records other
// writers appended since l.end, so that the time the lock is held (which
// every writer on the file waits for) is spent comparing their bytes
// rather than checking and hashing them. Nothing is adopted here: only
// follow, under the lock, takes the walk, and only when the file still
// holds those very bytes. It is tried only when the last lock found
// another writer's records, so a log with one writer pays no extra
// system call; and it is one read of what follows l.end (at most
// aheadWindow, up to the last whole line), not a stat and a read: the
// records past the window, or appended since, follow walks under the lock.
func (l *Log) lookAhead() {
	l.pre = ahead{}
	if l.f == nil || !l.othersSeen {
		return
	}
	buf := readAhead(l.f, &l.aheadBuf, l.end)
	if len(buf) == 0 {
		return
	}
	w, walked := l.walkerAtHead(), 0
	if walkRecords(&w, buf, &walked) {
		l.pre = ahead{from: l.end, size: l.end + int64(len(buf)), buf: buf, seq: l.h.seq, prev: l.h.prev, w: w, walked: walked}
	}
}

// aheadWindow bounds what lookAhead reads: a few rounds of four servers'
// records.
const aheadWindow = 16 << 10

// readAhead reads what f holds from from on, at most aheadWindow, into
// *keep's storage, and returns it up to its last newline (nil when there is
// none or the read fails).
func readAhead(f *os.File, keep *[]byte, from int64) []byte {
	if cap(*keep) < aheadWindow {
		*keep = make([]byte, aheadWindow)
	}
	buf := (*keep)[:aheadWindow]
	// One pread: os.File.ReadAt would read again after a short read, to
	// find the end of the file.
	n, err := unix.Pread(int(f.Fd()), buf, from)
	if err != nil || n <= 0 {
		return nil
	}
	return buf[:bytes.LastIndexByte(buf[:n], '\n')+1]
}

// walkerAtHead is a walker continuing from the head. first is unset: no
// record walked from here is where the tree came from, so every
// checkpoint's range is checked.
func (l *Log) walkerAtHead() walker {
	return walker{h: head{seq: l.h.seq, prev: l.h.prev, tree: cloneRange(l.h.tree)}, started: true, first: math.MaxUint64}
}

// walkRecords steps w over buf's records (each ending in a newline),
// counting them in walked; false at the first that does not continue.
func walkRecords(w *walker, buf []byte, walked *int) bool {
	if len(buf) == 0 {
		return true
	}
	for line := range bytes.SplitSeq(buf[:len(buf)-1], []byte("\n")) {
		if _, err := w.step(line); err != nil {
			return false
		}
		*walked++
	}
	return true
}

// readRecords reads f's bytes [from, to) into *keep's storage (kept for
// the next read when small); nil when they cannot be read or do not end
// in a newline.
func readRecords(f *os.File, keep *[]byte, from, to int64) []byte {
	buf := *keep
	if n := int(to - from); cap(buf) >= n {
		buf = buf[:n]
	} else if buf = make([]byte, n); n <= maxFollowKept {
		*keep = buf
	}
	if _, err := f.ReadAt(buf, from); err != nil || buf[len(buf)-1] != '\n' {
		return nil
	}
	return buf
}

// linked reports whether the open file still has a name.
func (l *Log) linked() bool {
	fs, err := fstat(int(l.f.Fd()))
	return err == nil && fs.nlink > 0
}

func (l *Log) detach() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

func (l *Log) unlock() {
	if l.f != nil {
		unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	}
}

// attach opens the file at the path, locked, and continues the chain in it.
func (l *Log) attach() error {
	if err := os.MkdirAll(filepath.Dir(l.opts.Path), 0o700); err != nil {
		return fmt.Errorf("audit log folder: %w", err)
	}
	f, err := os.OpenFile(l.opts.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	st, err := fstat(int(f.Fd()))
	if err != nil || !st.regular {
		f.Close()
		return fmt.Errorf("audit log %s is not a regular file", l.opts.Path)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return fmt.Errorf("audit log %s: lock: %w", l.opts.Path, err)
	}
	l.f, l.dev, l.ino, l.end = f, st.dev, st.ino, 0
	if err := l.load(st.size); err != nil {
		l.unlock()
		l.detach()
		if errors.Is(err, errMovedAside) {
			return l.attach() // a new, empty file
		}
		return err
	}
	return nil
}

// load brings the head to the end of the locked file of the given size:
// the chain the file holds, unless the head in memory or the kept
// checkpoint is further on (the file was cut back or replaced), in which
// case the file gets a checkpoint continuing that chain, and the gap shows.
func (l *Log) load(size int64) error {
	best := l.h
	if kept, ok := l.keptHead(); ok && kept.seq > best.seq {
		best = kept
	}
	if size > 0 {
		// The head is taken only from a checkpoint this key signed: another
		// writer's checkpoint (a forged range under a wrong prev) would
		// otherwise become the tree this log signs on top of.
		fh, end, err := readHead(l.f, size, l.opts.Log, note.VerifierList(l.opts.Key.verifier()))
		if errors.Is(err, errNotChained) {
			return l.moveAside(err)
		}
		if err != nil {
			return fmt.Errorf("audit log %s: %v; check it with `onellm-mcp audit verify` and move it aside to start a new file", l.opts.Path, err)
		}
		if l.end = end; end > 0 && fh.seq >= best.seq {
			l.unsigned = int(fh.seq - fh.signedSeq)
			l.h = fh.head
			return nil
		}
	} else {
		l.end = 0
	}
	l.h = best
	return l.checkpoint()
}

// Checkpoint appends a signed checkpoint now.
func (l *Log) Checkpoint() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.ensure(); err != nil {
		l.report(err)
		return err
	}
	defer l.unlock()
	err := l.checkpoint()
	l.report(err)
	return err
}

// checkpoint appends a checkpoint over every record so far; the file is
// locked and current.
func (l *Log) checkpoint() error {
	line, err := l.signedLine()
	if err != nil {
		return err
	}
	if err := l.write(append(line, '\n')); err != nil {
		return err
	}
	l.advance([][]byte{leafHash(line)}, sha256.Sum256(line))
	l.unsigned, l.lastSign = 0, time.Now()
	if err := l.keep(line); err != nil {
		l.opts.Log.Printf("audit log: the last checkpoint cannot be kept in %s: %v", l.opts.StateDir, err)
	}
	return nil
}

// checkpointBody is a checkpoint record after its seq and prev.
type checkpointBody struct {
	Time       string   `json:"time"`
	Event      string   `json:"event"`
	TreeSize   uint64   `json:"tree_size"`
	Checkpoint string   `json:"checkpoint"`
	Range      []string `json:"range"`
}

func (l *Log) signedLine() ([]byte, error) {
	root, err := l.h.tree.GetRootHash(nil)
	if err != nil {
		return nil, err
	}
	if root == nil {
		root = emptyRoot()
	}
	text := fmt.Sprintf("%s\n%d\n%s\n", l.opts.Key.Origin(), l.h.seq, base64.StdEncoding.EncodeToString(root))
	signed, err := note.Sign(&note.Note{Text: text}, l.opts.Key.signer)
	if err != nil {
		return nil, fmt.Errorf("signing a checkpoint: %v", err)
	}
	rng := []string{}
	for _, h := range l.h.tree.Hashes() {
		rng = append(rng, hex.EncodeToString(h))
	}
	body, err := json.Marshal(checkpointBody{Time: time.Now().UTC().Format(time.RFC3339Nano), Event: "checkpoint",
		TreeSize: l.h.seq, Checkpoint: string(signed), Range: rng})
	if err != nil {
		return nil, err
	}
	return chain(l.h.seq, l.h.prev, body), nil
}

// keptFile is where the last checkpoint of this log is kept.
func (l *Log) keptFile() string {
	sum := sha256.Sum256([]byte(l.opts.Path))
	return filepath.Join(l.opts.StateDir, "audit-"+hex.EncodeToString(sum[:8])+".checkpoint")
}

// KeptCheckpointFile is where the server keeps the last checkpoint of the
// log at path, in the state folder dir.
func KeptCheckpointFile(dir, path string) string {
	return (&Log{opts: Options{StateDir: dir, Path: path}}).keptFile()
}

func (l *Log) keep(line []byte) error {
	if l.opts.StateDir == "" {
		return nil
	}
	path := l.keptFile()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(line, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// keptHead is the head after the kept checkpoint, when there is a valid one.
func (l *Log) keptHead() (head, bool) {
	if l.opts.StateDir == "" {
		return head{}, false
	}
	b, err := os.ReadFile(l.keptFile())
	if err != nil {
		return head{}, false
	}
	line := trimNewline(b)
	h, err := headAfterCheckpoint(line, note.VerifierList(l.opts.Key.verifier()))
	if err != nil {
		l.opts.Log.Printf("audit log: ignoring the kept checkpoint %s: %v", l.keptFile(), err)
		return head{}, false
	}
	return h, true
}

// Reopen closes the file and opens the path again (SIGHUP, after rotation).
func (l *Log) Reopen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.detach()
	err := l.ensure()
	if err == nil {
		l.unlock()
	}
	l.report(err)
	return err
}

// Close writes a last checkpoint when records wait for one and closes the
// file.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.unsigned > 0 {
		if err = l.ensure(); err == nil {
			err = l.checkpoint()
			l.unlock()
		}
		l.report(err)
	}
	l.detach()
	return err
}

// ticker signs waiting records every CheckpointInterval.
func (l *Log) ticker() {
	defer close(l.done)
	t := time.NewTicker(l.opts.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			if l.unsigned > 0 && time.Since(l.lastSign) >= l.opts.CheckpointInterval/2 {
				err := l.ensure()
				if err == nil {
					err = l.checkpoint()
					l.unlock()
				}
				l.report(err)
			}
			l.mu.Unlock()
		}
	}
}

// report says a failure once per streak on stderr, and its end.
func (l *Log) report(err error) {
	switch {
	case err != nil && !l.failing:
		l.failing, l.refused = true, 1
		l.opts.Log.Printf("audit log cannot be written, so every action is refused until it can: %v", err)
	case err != nil:
		l.refused++
	case l.failing:
		l.failing = false
		l.opts.Log.Printf("audit log %s is written again (%d records were refused meanwhile)", l.opts.Path, l.refused)
	}
}

// moveAside renames a file at the path that holds no chain (an older
// version's log, or lines another program appended last), so nothing in it
// is lost and a new chained file starts; it returns errMovedAside.
func (l *Log) moveAside(why error) error {
	aside := l.opts.Path + ".unchained-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(l.opts.Path, aside); err != nil {
		return fmt.Errorf("audit log %s: %v, and it cannot be moved aside: %w", l.opts.Path, why, err)
	}
	l.opts.Log.Printf("audit log %s: %v; moved to %s, a new chained file starts", l.opts.Path, why, aside)
	return errMovedAside
}

// errMovedAside: the file at the path was moved aside; open the path again.
var errMovedAside = errors.New("moved aside")

// errNotChained marks a file that holds no chain.
var errNotChained = errors.New("not a chained audit log (no seq and prev); it was written by another program or an older version")
