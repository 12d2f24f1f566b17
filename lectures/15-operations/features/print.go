package features

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// NoFeatures is what Print says of a cluster whose nodes report no feature.
const NoFeatures = "the cluster reports no features: its ApiVersions answers carry none"

// Print writes the features as a table (the finalized level, each node's
// supported range, whether it could be upgraded), one line per feature on
// what its level turns on, and what upgrades and downgrades the cluster
// allows.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "features, as each node answers ApiVersions (%s):\n\n", nodesLine(r.Nodes))
	for _, n := range r.Nodes {
		if n.Err != nil {
			fmt.Fprintf(w, "node %d (%s) did not answer: %v\n\n", n.ID, n.Addr, n.Err)
		}
	}
	if len(r.Features) == 0 {
		fmt.Fprintln(w, NoFeatures)
		if r.Simulated {
			fmt.Fprintln(w, "embedded simulation: the simulation reports no features; on real Kafka every node lists metadata.version, kraft.version, group.version and the others")
		}
		return
	}

	t := brewkit.NewTable(w, "FEATURE", "FINALIZED", "SUPPORTED (NODES)", "UPGRADE")
	for _, f := range r.Features {
		up := "no"
		if f.CanUpgrade() {
			up = "to " + LevelString(f.Name, f.UpgradeTo)
		}
		t.Row(f.Name, LevelString(f.Name, f.Finalized), supported(f), up)
	}
	t.Flush() //nolint:errcheck // the writer's error is the caller's
	fmt.Fprintf(w, "finalized epoch %d: the offset of the metadata log the node applied, which grows all the time\n", r.Epoch)
	fmt.Fprintln(w, "(every change adds a record, and the active controller a no-op one every metadata.max.idle.interval.ms)")
	for _, f := range r.Features {
		if len(f.Disagree) > 0 {
			who := "nodes " + ids(f.Disagree) + " report"
			if len(f.Disagree) == 1 {
				who = "node " + ids(f.Disagree) + " reports"
			}
			fmt.Fprintf(w, "%s: %s another finalized level (not applied the latest change yet)\n", f.Name, who)
		}
	}

	fmt.Fprintf(w, "\nwhat the finalized levels turn on:\n")
	for _, f := range r.Features {
		fmt.Fprintf(w, "  %s %s: %s\n", f.Name, LevelString(f.Name, f.Finalized), f.Meaning)
	}

	fmt.Fprintf(w, "\nupgrades:\n")
	var none []string
	for _, f := range r.Features {
		if !f.CanUpgrade() {
			none = append(none, f.Name)
			continue
		}
		fmt.Fprintf(w, "  %s can go from %s to %s, which every node supports: `%s`\n",
			f.Name, LevelString(f.Name, f.Finalized), LevelString(f.Name, f.UpgradeTo), UpgradeCommand(f.Name, f.UpgradeTo))
		fmt.Fprintf(w, "    %s %s: %s\n", f.Name, LevelString(f.Name, f.UpgradeTo), Meaning(f.Name, f.UpgradeTo))
	}
	if len(none) > 0 {
		fmt.Fprintf(w, "  at the newest level every node supports: %s\n", strings.Join(none, ", "))
	}

	fmt.Fprintf(w, "\ndowngrades:\n")
	if c := r.Downgrade; c != nil {
		cmd := fmt.Sprintf("kafka-features downgrade --metadata %s --dry-run", LevelString(c.Feature, c.To))
		switch {
		case !c.Asked:
			fmt.Fprintf(w, "  `%s`: %s\n", cmd, c.Answer)
		case c.Accepted:
			fmt.Fprintf(w, "  `%s`, asked validate only (nothing changed):\n", cmd)
			fmt.Fprintf(w, "  the cluster would take it from %s down to %s\n", LevelString(c.Feature, c.From), LevelString(c.Feature, c.To))
		default:
			fmt.Fprintf(w, "  `%s`, asked validate only (nothing changed):\n", cmd)
			fmt.Fprintf(w, "  the cluster refuses: %s\n", c.Answer)
		}
	}
	fmt.Fprintln(w, "  Kafka takes metadata.version down only when no level in between changed the metadata format")
	fmt.Fprintln(w, "  (KIP-778), and not at all with --unsafe: there is no general downgrade (KIP-1155 proposes one).")
	fmt.Fprintln(w, "  Roll the software back only while the cluster still runs the old metadata.version: upgrade")
	fmt.Fprintln(w, "  every node's software first, and metadata.version once you will not go back.")
}

// UpgradeCommand is the kafka-features command that finalizes level of feature.
func UpgradeCommand(feature string, level int16) string {
	if feature == MetadataVersion {
		return "kafka-features upgrade --metadata " + LevelString(feature, level)
	}
	return fmt.Sprintf("kafka-features upgrade --feature %s=%d", feature, level)
}

// supported is a feature's supported ranges with the nodes that report each:
// "0..2 (1 2 3)", or "0..1 (1 2), 0..2 (3)" in the middle of a rolling upgrade.
func supported(f Feature) string {
	var ranges []Range
	byRange := map[Range][]int32{}
	for id, rng := range f.Supported {
		if _, ok := byRange[rng]; !ok {
			ranges = append(ranges, rng)
		}
		byRange[rng] = append(byRange[rng], id)
	}
	slices.SortFunc(ranges, func(a, b Range) int {
		return cmp.Compare(slices.Min(byRange[a]), slices.Min(byRange[b]))
	})
	var parts []string
	for _, rng := range ranges {
		parts = append(parts, fmt.Sprintf("%s..%s (%s)", LevelString(f.Name, rng.Min), LevelString(f.Name, rng.Max), ids(byRange[rng])))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func ids(ns []int32) string {
	s := slices.Sorted(slices.Values(ns))
	out := make([]string, len(s))
	for i, n := range s {
		out[i] = fmt.Sprint(n)
	}
	return strings.Join(out, " ")
}

func nodesLine(nodes []Node) string {
	var answered []int32
	for _, n := range nodes {
		if n.Err == nil {
			answered = append(answered, n.ID)
		}
	}
	if len(answered) == 1 {
		return "node " + ids(answered)
	}
	return "nodes " + ids(answered)
}
