package brewtest

import (
	"os/exec"
	"strings"
	"testing"
)

// CheckLecture holds a lecture module to the course's rules; call it from a
// test in the lecture's root folder. Its README.md and README.en.md pass
// CheckReadme and agree block for block, and no program under cmd/ links the
// simulation (kfake), which is for tests and the embedded stand only.
func CheckLecture(t *testing.T) {
	t.Helper()
	CheckReadme(t, "README.md")
	CheckReadme(t, "README.en.md")
	TranslationAgrees(t, "README.md", "README.en.md")

	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/...: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "/kfake") || strings.HasSuffix(dep, "/brewkit/sim") || strings.HasSuffix(dep, "/brewkit/brewtest") {
			t.Errorf("a program under cmd/ links %s: programs must not carry the simulation or test helpers", dep)
		}
	}
}
