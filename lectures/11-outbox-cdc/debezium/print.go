package debezium

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	fmt.Fprintf(w, "debezium: connector %s (Debezium %s, %s) registered with PUT /connectors/%s/config on %s;\n",
		o.Connector, stand.DebeziumVersion, cdc.Plugin, o.Connector, o.Connect.Host())
	fmt.Fprintf(w, "slot %s, publication %s on %s.outbox, the outbox event router into %s\n", o.Slot, o.Publication, o.Schema, o.Topic)
	fmt.Fprintf(w, "task running %s after the PUT\n\n", r.Registered.Round(10*time.Millisecond))

	fmt.Fprintf(w, "the record of %s, as the router writes it:\n", r.SampleRow.OrderID)
	t := brewkit.NewTable(w, "PART", "VALUE")
	t.Row("key", r.Sample.Key)
	for _, h := range r.Sample.Headers {
		t.Row("header", h[0]+"="+h[1])
	}
	t.Row("value", r.Sample.Value)
	t.Flush()
	fmt.Fprintln(w)

	fmt.Fprintf(w, "its offset in Connect's offsets topic %s (GET /connectors/%s/offsets shows the same):\n", r.OffsetsTopic, o.Connector)
	fmt.Fprintf(w, "key    %s\n", r.OffsetKey)
	fmt.Fprintf(w, "value  %s\n\n", offsetFields(r.OffsetValue))

	if r.Killed != "" {
		fmt.Fprintf(w, "worker killed -9 after %s committed; order-service went on writing\n", r.KilledAfter)
		fmt.Fprintf(w, "its REST API back %s after the kill, records again %s after it\n\n",
			r.WorkerBack.Round(100*time.Millisecond), r.Delivering.Round(100*time.Millisecond))
	}
	t = brewkit.NewTable(w, "ORDERS", "EVENTS", "LOST", "DUPLICATES")
	t.Row(r.Written, r.Events, len(r.Lost), r.Duplicates)
	t.Flush()
	if len(r.Lost) > 0 {
		fmt.Fprintf(w, "lost: %v\n", r.Lost)
	}
	fmt.Fprintln(w)
	if r.Removed {
		fmt.Fprintf(w, "connector stopped, its offsets deleted, connector deleted; ")
	}
	if r.SlotDropped {
		fmt.Fprintf(w, "slot %s dropped\n", o.Slot)
	} else {
		fmt.Fprintf(w, "slot %s STILL THERE\n", o.Slot)
	}
}

// offsetFields is an offset's JSON as name=value pairs, sorted by name.
func offsetFields(v string) string {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return v
	}
	var names []string
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, " ")
}
