package brewkit

import (
	"strings"
	"testing"
)

func TestTopicNameError(t *testing.T) {
	for _, ok := range []string{"brew.orders.v1", "a", "A_b-9", strings.Repeat("x", 249), "..."} {
		if err := topicNameError(ok); err != nil {
			t.Errorf("%q: %v, want a valid name", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "bad/name", "a b", "заказы", strings.Repeat("x", 250)} {
		err := topicNameError(bad)
		if err == nil || !strings.Contains(err.Error(), "1 to 249 characters") {
			t.Errorf("%q: %v, want the rule", bad, err)
		}
	}
}

func TestFlagCheckNames(t *testing.T) {
	var fc FlagCheck
	fc.Topic("topic", "brew.orders.v1")
	fc.Name("group", "brew.analytics")
	if names := fc.Topics("topic", "a,b"); len(names) != 2 || len(fc.problems) != 0 {
		t.Fatalf("valid names: %v, problems %q", names, fc.problems)
	}
	fc.Topic("topic", "bad/name")
	fc.Topics("topic", ",,")
	fc.Name("group", "")
	want := []string{
		`-topic bad/name: '/' is not allowed: a topic name`,
		`-topic ,,: want comma-separated topic names (a,b): must not be empty`,
		`-group "": must not be empty`,
	}
	if len(fc.problems) != len(want) {
		t.Fatalf("problems %q, want %d", fc.problems, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(fc.problems[i], w) {
			t.Errorf("problem %q, want it to start %q", fc.problems[i], w)
		}
	}
}
