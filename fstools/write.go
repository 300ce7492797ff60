package fstools

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// maxEditBytes bounds a file apply_patch reads into memory.
const maxEditBytes = 32 << 20

// original is a file's content and mode as read before a change, and the
// identity it had then, so a change made by someone else since is seen.
type original struct {
	content  []byte
	mode     os.FileMode
	dev, ino uint64
	ctime    unix.Timespec
}

// readOriginal reads a regular text file by its real path, refusing any
// symlink on the way.
func readOriginal(real string) (original, error) {
	f, err := openNoSymlinks(real, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return original{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return original{}, err
	}
	if !fi.Mode().IsRegular() {
		return original{}, fmt.Errorf("%s is not a regular file", real)
	}
	if fi.Size() > maxEditBytes {
		return original{}, fmt.Errorf("%s is %d bytes, over the %d-byte limit for editing", real, fi.Size(), maxEditBytes)
	}
	// One read of the size fstat gave (plus one byte, to see growth).
	data := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return original{}, err
	}
	grew := n == len(data)
	data = data[:n]
	if grew { // it grew: read the rest, within the limit
		rest, err := io.ReadAll(io.LimitReader(f, maxEditBytes+1-int64(n)))
		if err != nil {
			return original{}, err
		}
		data = append(data, rest...)
	}
	if len(data) > maxEditBytes {
		return original{}, fmt.Errorf("%s grew over the %d-byte limit while read", real, maxEditBytes)
	}
	if strings.IndexByte(string(data[:min(len(data), 8000)]), 0) >= 0 {
		return original{}, fmt.Errorf("%s is a binary file; apply_patch changes text files", real)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return original{}, err
	}
	return original{content: data, mode: fi.Mode().Perm(), dev: uint64(st.Dev), ino: st.Ino, ctime: st.Ctim}, nil
}
