package patch

import (
	"errors"
	"strings"
	"testing"
)

func TestEnvelope(t *testing.T) {
	before := tree{
		"src/app.py": {content: "import os\n\nclass A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n"},
		"old.txt":    {content: "bye\n"},
		"move.txt":   {content: "one\ntwo\nthree\n"},
		"tail.txt":   {content: "x\nend\nx\nend\n"},
	}
	patch := `*** Begin Patch
*** Add File: docs/new.md
+# Title
+
+text
*** Delete File: old.txt
*** Update File: src/app.py
@@ class B:
     def f(self):
-        return 1
+        return 2
@@ def g(self):
-        pass
+        return 3
*** Update File: move.txt
*** Move to: moved/there.txt
@@
 one
-two
+TWO
*** Update File: tail.txt
@@
 x
-end
+END
*** End of File
*** End Patch
`
	fcs, err := Parse(patch)
	if err != nil {
		t.Fatal(err)
	}
	if fcs[3].OldPath != "move.txt" || fcs[3].NewPath != "moved/there.txt" || !fcs[3].IsRename() {
		t.Errorf("move parsed as %+v", fcs[3])
	}
	got, results := applyTree(t, before, fcs)
	compareTrees(t, got, tree{
		"docs/new.md":     {content: "# Title\n\ntext\n"},
		"src/app.py":      {content: "import os\n\nclass A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 2\n\n    def g(self):\n        return 3\n"},
		"moved/there.txt": {content: "one\nTWO\nthree\n"},
		"tail.txt":        {content: "x\nend\nx\nEND\n"},
	}, false)
	if r := results[2]; r.Hunks != 2 || r.Added != 2 || r.Removed != 2 {
		t.Errorf("stats %+v", r)
	}
}

func TestEnvelopeDetails(t *testing.T) {
	cases := []struct{ name, orig, patch, want string }{
		{
			name:  "stacked anchors",
			orig:  "class A:\n  def f():\n    x = 1\nclass B:\n  def f():\n    x = 1\n",
			patch: "@@ class B:\n@@   def f():\n-    x = 1\n+    x = 2\n",
			want:  "class A:\n  def f():\n    x = 1\nclass B:\n  def f():\n    x = 2\n",
		},
		{
			name:  "first hunk without @@",
			orig:  "a\nb\n",
			patch: " a\n-b\n+c\n",
			want:  "a\nc\n",
		},
		{
			name:  "pure addition after an anchor",
			orig:  "header\nbody\n",
			patch: "@@ header\n+inserted\n",
			want:  "header\ninserted\nbody\n",
		},
		{
			name:  "pure addition without anchor goes at the end",
			orig:  "a\nb\n",
			patch: "@@\n+c\n",
			want:  "a\nb\nc\n",
		},
		{
			name:  "sequential cursor: same context twice",
			orig:  "x\ny\nx\ny\n",
			patch: "@@\n x\n-y\n+Y1\n@@\n x\n-y\n+Y2\n",
			want:  "x\nY1\nx\nY2\n",
		},
		{
			name:  "whitespace fuzz and crlf file",
			orig:  "a  \r\n\tb\r\nc\r\n",
			patch: "@@\n a\n-  b\n+B\n",
			want:  "a  \r\nB\r\nc\r\n",
		},
		{
			name:  "blank line before the next marker is not context",
			orig:  "a\nb\n",
			patch: "@@\n-a\n+A\n\n",
			want:  "A\nb\n",
		},
		{
			name:  "crlf patch",
			orig:  "a\nb\n",
			patch: "@@\r\n a\r\n-b\r\n+c\r\n",
			want:  "a\nc\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := "*** Begin Patch\n*** Update File: f\n" + tc.patch + "*** End Patch\n"
			if strings.Contains(tc.patch, "\r\n") {
				p = crlf("*** Begin Patch\n*** Update File: f\n") + tc.patch + "*** End Patch\r\n"
			}
			res := mustApply(t, tc.orig, parseOne(t, p))
			if string(res.Content) != tc.want {
				t.Errorf("got %q, want %q", res.Content, tc.want)
			}
		})
	}
}

func TestEnvelopeWrapped(t *testing.T) {
	for _, p := range []string{
		"```\n*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch\n```\n",
		"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End Patch\nEOF\n",
	} {
		if res := mustApply(t, "a\n", parseOne(t, p)); string(res.Content) != "b\n" {
			t.Errorf("%q", res.Content)
		}
	}
}

func TestEnvelopeErrors(t *testing.T) {
	orig := "alpha\nbeta\ngamma\ndelta\n"
	cases := []struct {
		name, patch string
		want        []string
	}{
		{"anchor missing", "@@ epsilon\n-beta\n+B\n", []string{"hunk 1 (@@ epsilon)", `anchor line "epsilon" was not found`}},
		{"context missing", "@@\n alpha\n-betta\n+B\n", []string{"hunk 1 (@@)", `"betta"`, "closest text in the file, at line 1", `2: "beta"`}},
		{"end of file", "@@\n-beta\n+B\n*** End of File\n", []string{"at the end of the file"}},
		{"cursor", "@@\n-gamma\n+G\n@@\n-alpha\n+A\n", []string{"hunk 2", "they match at line 1, before the end of the previous hunk"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := parseOne(t, "*** Begin Patch\n*** Update File: f\n"+tc.patch+"*** End Patch\n")
			_, err := Apply([]byte(orig), fc)
			var he *HunkError
			if !errors.As(err, &he) {
				t.Fatalf("want *HunkError, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
