package fstools

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// EntryNames lists the names in the folder real (a real path, opened as
// every path here is: no symlink on the way), without a stat of each. The
// exec gate compares a recursive removal's operands with the workspace
// root's entries through it (shelltool's raiseEmptying).
func EntryNames(real string) ([]string, error) {
	f, err := openNoSymlinks(real, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", real, err)
	}
	return names, nil
}
