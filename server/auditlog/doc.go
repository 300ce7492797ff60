// Package auditlog owns the audit log's file: appending chained, bounded
// JSONL records, signing checkpoints over them, and verifying, proving and
// reading them back.
//
// # Format
//
// Every line is one JSON object that begins with "seq" (0, 1, 2, … with no
// gap, continuing across restarts and files) and "prev" (hex SHA-256 of the
// previous line's bytes, without its newline). The records form an RFC 6962
// Merkle tree: record seq N is leaf N, its leaf hash SHA-256(0x00 || line).
// A checkpoint record ("event":"checkpoint", at seq S) carries a C2SP
// tlog-checkpoint signed note (origin, tree size S, root of the tree over
// records 0..S-1) signed with the user's Ed25519 key, and the compact range
// (the subtree hashes) of that tree, so a file can be verified from its own
// first checkpoint on. Every file starts with a checkpoint: a new log with
// the empty tree, a rotated or recreated one with the tree of everything
// written before. Checkpoints are written every N records, every T seconds
// when records are waiting, and at shutdown.
//
// # Security model
//
// Complete or nothing: before each write the open file must still be the
// inode at the configured path with at least one link (else the path is
// reopened); the write of a record either lands whole or is cut back to the
// record's start, and the caller gets an error so the action it records
// does not run. A record is bounded (4 KiB by default): a longer string
// field keeps a prefix, its length and its SHA-256. Writers on the same file
// (two servers sharing the default log) take an flock per append and pick
// up each other's records, so the chain stays one chain. A file whose last
// line is not a chained record (an older version's log, a line another
// program appended) is renamed aside whole and a new file starts.
//
// Tamper evidence: changing, removing, reordering or cutting records breaks
// the chain at the first bad record; a rewritten chain needs a checkpoint
// signed with the key. The key lives in the user's state folder (0600,
// refused when others can read it; the server keeps that folder from every
// tool), so the tools cannot forge checkpoints. The last signed checkpoint is also kept
// beside the key, so a log cut back past it, or replaced wholesale, is
// detected by verify and continued by the server with a visible gap.
//
// Not protected: anyone running as the user can read the key and rewrite
// the whole log with fresh signatures; only a checkpoint already handed to
// someone else (or an inclusion proof they hold) pins history against that.
// Records after the last checkpoint are chained but not yet signed, and a
// crash loses at most those records' signatures, not their chain.
package auditlog
