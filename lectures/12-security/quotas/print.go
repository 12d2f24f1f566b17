package quotas

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes the run as `make quotas` shows it.
func Print(w io.Writer, r Result) {
	fmt.Fprintf(w, "users %s and %s (SCRAM-SHA-512) may write %s* (a prefixed ACL) and log in on the SECURE listeners\n", r.Noisy.Name, r.Quiet.Name, TopicPrefix)
	fmt.Fprintf(w, "%s: %d partitions led by nodes %v; %d-byte records, no compression, both users flat out at once\n",
		r.Topic, Partitions, r.Leaders, r.RecordBytes)
	fmt.Fprintf(w, "%s with the quota, DescribeClientQuotas user=%s: %s (on every broker); then %s with it removed\n",
		r.Limited, r.Noisy.Name, described(r.Described), r.Free)
	fmt.Fprintln(w)
	t := brewkit.NewTable(w, "USER", "QUOTA KIB/S", "WITH KIB/S", "WITHOUT KIB/S", "WITH/QUOTA", "WITH/WITHOUT", "THROTTLED %")
	for _, u := range []User{r.Noisy, r.Quiet} {
		quota := "none"
		if u.Quota > 0 {
			quota = KiB(float64(u.Quota))
		}
		t.Row(u.Name, quota, KiB(u.With.PerBroker()), KiB(u.Without.PerBroker()),
			ratio(u.With.PerBroker(), float64(r.Noisy.Quota)), ratio(u.With.PerBroker(), u.Without.PerBroker()),
			strconv.FormatFloat(100*u.With.ThrottledShare(r.Leaders), 'f', 0, 64))
	}
	t.Flush() //nolint:errcheck // stdout
	fmt.Fprintln(w)
	fmt.Fprintln(w, "KIB/S: bytes acknowledged a second by each broker (the mean over the leaders): a quota holds on every broker apart")
	fmt.Fprintf(w, "WITH/QUOTA: against %s's quota; THROTTLED: the part of the %s each broker told the client to wait (throttle_time_ms)\n", r.Noisy.Name, r.Limited)
	fmt.Fprintf(w, "the quota is removed, the users stay: `make quotas-delete` deletes them\n")
}

func described(q map[string]float64) string {
	if len(q) == 0 {
		return "no quota"
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		kv = append(kv, fmt.Sprintf("%s=%.0f", k, q[k]))
	}
	return strings.Join(kv, " ")
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	v := a / b
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// PrintDeleted writes what Delete removed.
func PrintDeleted(w io.Writer, d Deleted) {
	fmt.Fprintf(w, "%s removed from %v; ACLs deleted: %d; SCRAM passwords deleted: %v\n", ProducerByteRate, names(d.Quotas), d.ACLs, names(d.Users))
}

func names(s []string) string { return "[" + strings.Join(s, " ") + "]" }
