package rollingupgrade

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/15-operations/features"
)

// This file is the harness around Run: the metadata.version levels it reads
// off the nodes' ApiVersions answers to show each roll, and the verdict and
// the table it prints. The roll, node by node, and UpdateFeatures are in
// upgrade.go.

// finalized is the cluster's metadata.version.
func finalized(fs features.Result) string {
	f, _ := fs.Feature(features.MetadataVersion)
	return features.LevelString(features.MetadataVersion, f.Finalized)
}

// supports is the newest metadata.version node n announced.
func supports(fs features.Result, n int32) string {
	for _, nd := range fs.Nodes {
		if nd.ID == n {
			if r, ok := nd.Supported[features.MetadataVersion]; ok {
				return features.LevelString(features.MetadataVersion, r.Max)
			}
		}
	}
	return "?"
}

// answer is what UpdateFeatures answered, as the run prints it.
func answer(err error) string {
	if err != nil {
		return "refused: " + err.Error()
	}
	return "accepted"
}

// OK says the upgrade went as a rolling upgrade must: every node rolled and
// supports more after, finalize accepted, the downgrade refused, nothing
// lost or duplicated.
func (r Result) OK() bool {
	return len(r.Rolls) == 3 && r.Finalize == "accepted" && r.Refused && r.Witness.OK() &&
		!slices.ContainsFunc(r.Rolls, func(x Roll) bool { return x.Before == x.After })
}

// Print writes the rolls, the finalize and the downgrade, and the witness.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "lab cluster of 3 nodes, Kafka %s -> %s, one node at a time; metadata.version %s meanwhile\n", From, To, r.Finalized)
	t := brewkit.NewTable(w, "NODE", "SUPPORTED BEFORE", "SUPPORTED AFTER", "BROKER AGAIN", "ISR FULL")
	for _, x := range r.Rolls {
		t.Row(x.Node, "up to "+x.Before, "up to "+x.After, x.Back.Round(100*time.Millisecond), x.Full.Round(100*time.Millisecond))
	}
	t.Flush() //nolint:errcheck // a writer of ours
	fmt.Fprintf(w, "UpdateFeatures metadata.version -> %s: %s\n", r.Final, r.Finalize)
	fmt.Fprintf(w, "downgrade back, validate only: %s\n", r.Downgrade)
	fmt.Fprintf(w, "witness: sent %d, acknowledged %d, read %d: lost %d, duplicated %d; longest wait for an acknowledgement %s\n",
		r.Witness.Sent, r.Witness.Acked, r.Witness.Read, r.Witness.Lost, r.Witness.Duplicated, r.Witness.LongestGap.Round(10*time.Millisecond))
}
