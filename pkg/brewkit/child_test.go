package brewkit

import (
	"context"
	"slices"
	"testing"
)

func TestRunChild(t *testing.T) {
	ctx := context.Background()
	run := func(script string) ([]string, bool, error) {
		var said []string
		died, err := RunChild(ctx, Config{}, "the script", []string{"sh", "-c", script}, func(l string) { said = append(said, l) })
		return said, died, err
	}

	said, died, err := run("echo one; printf two")
	if err != nil || died || !slices.Equal(said, []string{"one", "two"}) {
		t.Fatalf("a clean run: said %q, died %v, err %v", said, died, err)
	}

	said, died, err = run("echo cooked 3; kill -9 $$")
	if err != nil || !died || !slices.Equal(said, []string{"cooked 3"}) {
		t.Fatalf("a SIGKILL: said %q, died %v, err %v", said, died, err)
	}

	_, died, err = run("echo 'kitchen: no broker answers' >&2; exit 1")
	if died || err == nil || err.Error() != "kitchen: no broker answers" {
		t.Fatalf("a failure with one line: died %v, err %v", died, err)
	}

	_, _, err = run("echo a >&2; echo b >&2; exit 3")
	if err == nil || err.Error() != "the script failed: exit status 3" {
		t.Fatalf("a failure with a longer story: err %v", err)
	}
}
