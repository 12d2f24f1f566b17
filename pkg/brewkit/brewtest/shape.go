package brewtest

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// ReadmeBlock returns the fenced code block that follows the HTML comment
// <!-- output: name --> in the README at path. Lecture READMEs mark each
// expected output this way so tests can hold the program to it.
func ReadmeBlock(t testing.TB, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("<!-- output: %s -->", name)
	_, rest, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s has no %s", path, marker)
	}
	_, rest, ok = strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("%s: no code block after %s", path, marker)
	}
	_, rest, _ = strings.Cut(rest, "\n") // the fence's info string
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("%s: unterminated code block after %s", path, marker)
	}
	return block
}

// ShapePattern turns an expected output into a pattern for lines of the same
// shape: every run of digits matches any number, every run of spaces any run
// of spaces, everything else itself.
func ShapePattern(expected string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^`)
	for _, tok := range shapeToken.FindAllString(strings.TrimRight(expected, "\n"), -1) {
		switch {
		case tok[0] >= '0' && tok[0] <= '9':
			b.WriteString(`\d+`)
		case tok[0] == ' ':
			b.WriteString(` +`)
		default:
			b.WriteString(regexp.QuoteMeta(tok))
		}
	}
	b.WriteString(`\n?$`)
	return regexp.MustCompile(b.String())
}

var shapeToken = regexp.MustCompile(`\d+| +|[^\d ]+`)

// MatchesReadme fails the test unless got has the shape of the README's block.
// Each normalize function is applied to both sides first, for words that vary
// from run to run (which node holds a role, say).
func MatchesReadme(t testing.TB, readme, name, got string, normalize ...func(string) string) {
	t.Helper()
	want := ReadmeBlock(t, readme, name)
	for _, f := range normalize {
		want, got = f(want), f(got)
	}
	if !ShapePattern(want).MatchString(got) {
		t.Fatalf("output does not match the shape of README block %q\n--- README:\n%s--- got:\n%s", name, want, got)
	}
}

var duration = regexp.MustCompile(`(\d+(\.\d+)?(ms|µs|ns|h|m|s))+`)

// Durations blanks Go durations (1.5s, 198ms, 1m2s), whose shape varies from
// run to run, for MatchesReadme.
func Durations(s string) string { return duration.ReplaceAllString(s, "DURATION") }

// WithoutSimNote drops the lines a program adds on the simulation, which
// start with "(embedded simulation", so one README block serves both tiers.
func WithoutSimNote(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "(embedded simulation") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

var answerRe = regexp.MustCompile(`<!-- answer: (\S+) = (.*?) -->`)

// ReadmeAnswer returns the value of <!-- answer: name = value --> in the
// README at path: an exercise's answer, which the lecture's tests check.
func ReadmeAnswer(t testing.TB, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range answerRe.FindAllStringSubmatch(string(b), -1) {
		if m[1] == name {
			return strings.TrimSpace(m[2])
		}
	}
	t.Fatalf("%s has no <!-- answer: %s = ... -->", path, name)
	return ""
}

var outputMarker = regexp.MustCompile(`<!-- output: (\S+) -->`)

// TranslationAgrees fails the test unless every expected-output block of the
// translation (README.en.md) is the same as the README's block of that name,
// which the lecture's tests hold the programs to.
func TranslationAgrees(t testing.TB, readme, translation string) {
	t.Helper()
	b, err := os.ReadFile(translation)
	if err != nil {
		t.Fatal(err)
	}
	names := outputMarker.FindAllStringSubmatch(string(b), -1)
	if len(names) == 0 {
		t.Fatalf("%s has no output blocks", translation)
	}
	for _, m := range names {
		if got, want := ReadmeBlock(t, translation, m[1]), ReadmeBlock(t, readme, m[1]); got != want {
			t.Errorf("block %q differs between %s and %s:\n%s\n---\n%s", m[1], translation, readme, got, want)
		}
	}
}
