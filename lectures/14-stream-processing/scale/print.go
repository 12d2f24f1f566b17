package scale

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes the run for people: the chunks and who owned which
// partitions once each was counted, the instances and what their restores
// read, the standby's effect, and the verdict.
//
// What varies from run to run: the topic's name (first line); durations
// (the TOOK columns, the warm-up's "in ..."); which partitions each
// instance gets (OWNERS, PARTITIONS), and with them each instance's
// ORDERS and RESTORED RECORDS and the records in the two standby lines
// (how many changelog records a partition has depends on how the orders
// fell into batches). What does not: the chunks' orders, JOINED, WARM, the
// totals, windows and too-late counts, and the verdict.
func (r Result) Print(w io.Writer) {
	per := 0
	if len(r.Phases) > 0 {
		per = r.Phases[0].Orders
	}
	fmt.Fprintf(w, "%d orders of %d shops in %d chunks of about %d, %d partitions: %s\n", r.Written.Orders, r.Plan.Shops, len(r.Phases), per, Partitions, r.In)
	t := brewkit.NewTable(w, "CHUNK", "ORDERS", "INSTANCES", "OWNERS ONCE COUNTED", "TOOK")
	for _, ph := range r.Phases {
		var ids []string
		for _, i := range r.Instances {
			if i.Joined < ph.Chunk {
				ids = append(ids, i.ID)
			}
		}
		t.Row(ph.Chunk, ph.Orders, strings.Join(ids, " "), ownersText(ph.Owners), ph.Took.Round(100*time.Millisecond))
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintln(w)

	t = brewkit.NewTable(w, "INSTANCE", "JOINED", "WARM", "PARTITIONS", "ORDERS", "RESTORED RECORDS", "TOOK")
	for _, i := range r.Instances {
		joined, warm := "at the start", "cold"
		if i.Joined > 0 {
			joined = fmt.Sprintf("after chunk %d", i.Joined)
		}
		if i.Warm {
			warm = "standby"
		}
		n, took := i.Takeover()
		t.Row(i.ID, joined, warm, fmt.Sprint(i.Stats.Partitions), i.Stats.Orders, n, took.Round(time.Millisecond))
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintln(w, "RESTORED RECORDS: the changelog records read on taking partitions (a standby's warm-up apart)")
	var cold, warm *Instance
	for k := range r.Instances {
		switch i := &r.Instances[k]; {
		case i.Warm && warm == nil:
			warm = i
		case !i.Warm && i.Joined > 0 && cold == nil:
			cold = i
		}
	}
	if warm != nil {
		fmt.Fprintf(w, "standby %s: read %d changelog records of %d partitions in %s before joining\n",
			warm.ID, warm.WarmUp.Records, len(warm.WarmUp.Partitions), warm.WarmUp.Took.Round(time.Millisecond))
	}
	if warm != nil && cold != nil {
		cn, _ := cold.Takeover()
		wn, _ := warm.Takeover()
		fmt.Fprintf(w, "takeover: cold %s read %d changelog records for its %d partitions, standby %s %d for its %d\n",
			cold.ID, cn, len(cold.Stats.Partitions), warm.ID, wn, len(warm.Stats.Partitions))
	}
	fmt.Fprintf(w, "orders %d, counted %d (the instances together), judged %d (the changelog); recount: %d windows, %d too late\n",
		r.Written.Orders, r.Counted(), r.Judged, r.Windows, r.Recount.TooLate)
	verdict := "EXACT: every window equals the recount"
	if !r.Exact() {
		verdict = fmt.Sprintf("WRONG: %d windows differ from the recount, %+d cents", r.Differ, r.Extra)
	}
	fmt.Fprintln(w, verdict)
}
