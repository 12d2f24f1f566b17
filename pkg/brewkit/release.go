package brewkit

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Release is what a cluster says of its Kafka release. Kafka sends no
// version string over the wire; it does send, in every ApiVersions answer,
// the range of each feature it supports and the level the cluster has
// finalized. The newest metadata.version a broker supports names its release
// (Kafka 4.4.0 supports up to 4.4-IV2); the finalized one is what the cluster
// runs, which stays behind after an upgrade until kafka-features upgrades it.
type Release struct {
	Software  string           // "4.4": the release of the broker that answered; "" when it reports no features
	Finalized string           // "4.4-IV2": the metadata.version the cluster runs
	Features  map[string]int16 // every finalized feature and its level (share.version 2, ...)
}

// metadataVersions are the production metadata.version levels of Kafka 4.0
// and later, as the 4.4.0 jars list them (MetadataVersion.values()).
var metadataVersions = map[int16]string{
	22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3",
	26: "4.1-IV0", 27: "4.1-IV1",
	28: "4.2-IV0", 29: "4.2-IV1",
	30: "4.3-IV0",
	31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2",
}

// metadataVersionName is the name of a metadata.version level ("4.4-IV2"),
// or a description of a level this table does not know.
func metadataVersionName(level int16) string {
	if name, ok := metadataVersions[level]; ok {
		return name
	}
	if level > 33 {
		return fmt.Sprintf("level %d (newer than Kafka 4.4)", level)
	}
	return fmt.Sprintf("level %d (older than Kafka 4.0)", level)
}

// releaseOf is the release a metadata.version name belongs to ("4.4").
func releaseOf(name string) string {
	r, _, _ := strings.Cut(name, "-")
	return r
}

// ClusterRelease asks a broker of cl for its features.
func ClusterRelease(ctx context.Context, cl *kgo.Client) (Release, error) {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return Release{}, fmt.Errorf("asking the cluster for its features: %w", err)
	}
	r := Release{Features: map[string]int16{}}
	for _, f := range resp.SupportedFeatures {
		if f.Name == "metadata.version" {
			r.Software = releaseOf(metadataVersionName(f.MaxVersion))
		}
	}
	for _, f := range resp.FinalizedFeatures {
		r.Features[f.Name] = f.MaxVersionLevel
		if f.Name == "metadata.version" {
			r.Finalized = metadataVersionName(f.MaxVersionLevel)
		}
	}
	return r, nil
}

// String is the release as status lines print it: "Kafka 4.4 (metadata.version 4.4-IV2)".
func (r Release) String() string {
	switch {
	case r.Software == "":
		return "a cluster that reports no Kafka features (not Apache Kafka, or older than 2.7)"
	case r.Finalized == "":
		return "Kafka " + r.Software
	default:
		return fmt.Sprintf("Kafka %s (metadata.version %s)", r.Software, r.Finalized)
	}
}

// Differs says how r differs from the release the course runs (minor, as
// "4.4"), or "" when it does not: another software release, or a cluster
// that still runs an older metadata.version after an upgrade.
func (r Release) Differs(minor string) string {
	switch {
	case r.Software == "":
		return ""
	case r.Software != minor:
		return fmt.Sprintf("the cluster runs Kafka %s, the course is written for Kafka %s: some lectures will print other results", r.Software, minor)
	case r.Finalized != "" && releaseOf(r.Finalized) != minor:
		return fmt.Sprintf("the brokers run Kafka %s but the cluster still runs metadata.version %s (formatted by an older release): `make reset && make up` formats it anew", r.Software, r.Finalized)
	}
	return ""
}
