package server

import (
	"encoding/json"
	"os"
	"testing"
)

// TestInspectorVersionPinned: the Inspector command printed at start-up
// pins the version the e2e tests run.
func TestInspectorVersionPinned(t *testing.T) {
	b, err := os.ReadFile("../e2e/ts/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.Dependencies["@modelcontextprotocol/inspector"]; got != InspectorVersion {
		t.Fatalf("e2e/ts pins the Inspector at %q, the printed command at %q", got, InspectorVersion)
	}
}
