package features

import (
	"fmt"
	"strconv"
)

// MetadataVersion is the feature that names the format of the cluster's
// metadata log and of the requests between nodes; its levels have names.
const MetadataVersion = "metadata.version"

// metadataVersions are the names of the metadata.version levels Kafka 4.4
// knows, as its MetadataVersion enum lists them: 3.3-IV3 (level 7) is the
// oldest a 4.x node supports, 4.4-IV2 (level 33) the newest.
var metadataVersions = map[int16]string{
	7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2",
	12: "3.6-IV0", 13: "3.6-IV1", 14: "3.6-IV2",
	15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4",
	20: "3.8-IV0", 21: "3.9-IV0",
	22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3",
	26: "4.1-IV0", 27: "4.1-IV1",
	28: "4.2-IV0", 29: "4.2-IV1",
	30: "4.3-IV0",
	31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2",
}

// LevelString is a feature level as kafka-features describe prints it: a
// metadata.version by its name (4.4-IV2; "UNKNOWN 40" for a level this table
// does not know, as the tool says), any other feature as its number.
func LevelString(feature string, level int16) string {
	if feature != MetadataVersion {
		return strconv.Itoa(int(level))
	}
	if name, ok := metadataVersions[level]; ok {
		return name
	}
	return fmt.Sprintf("UNKNOWN %d", level)
}

// meanings says what a finalized level of a feature turns on, as the Kafka
// sources (server-common's FeatureVersion enums) and the upgrade notes of
// kafka.apache.org describe it. A level missing here is printed as "unknown
// level": this program does not guess.
var meanings = map[string]map[int16]string{
	"kraft.version": {
		0: "static quorum: the voters are the controller.quorum.voters list; they cannot change while the cluster runs",
		1: "dynamic quorum (KIP-853): controllers join and leave the voters at run time (kafka-metadata-quorum add-controller)",
	},
	"group.version": {
		0: "classic consumer groups only: the members' leader assigns the partitions (JoinGroup/SyncGroup)",
		1: "the consumer rebalance protocol (KIP-848): the group coordinator assigns partitions, members heartbeat (group.protocol=consumer)",
	},
	"share.version": {
		0: "no share groups",
		1: "share groups (KIP-932): Kafka as a queue, records acknowledged one by one (lecture 08)",
		// Kafka's own system tests name level 2 "KIP-1191 DLQ" (bootstrap
		// metadata.version 4.4-IV0); lecture 08 shows it on the stand.
		2: "share groups with dead-letter topics (KIP-1191): an archived record can go to the group's errors.deadletterqueue.topic.name",
	},
	"transaction.version": {
		0: "transactions as before KIP-890: the client adds each partition to the transaction itself",
		1: "flexible transaction state records in __transaction_state (KIP-890), the step before transactions v2",
		2: "transactions v2 (KIP-890): the coordinator bumps the producer epoch at every commit or abort and partitions join the transaction as records arrive (server-side defence)",
	},
	"eligible.leader.replicas.version": {
		0: "no eligible leader replicas: only a member of the ISR may become leader (short of an unclean election)",
		1: "eligible leader replicas (KIP-966): a replica that leaves the ISR as it shrinks below min.insync.replicas holds every acknowledged write, so it may still be elected leader",
	},
	"streams.version": {
		0: "no streams groups: Kafka Streams rebalances through a classic consumer group",
		1: "the streams rebalance protocol (KIP-1071): the broker assigns Kafka Streams tasks (group.protocol=streams)",
	},
}

// Meaning says what level of feature turns on, or "unknown level" for a
// feature or level this program cannot vouch for.
func Meaning(feature string, level int16) string {
	if feature == MetadataVersion {
		name, ok := metadataVersions[level]
		if !ok {
			return "unknown level"
		}
		return "the format of the metadata log and of the requests between nodes, as Kafka " + release(name) + " writes it"
	}
	if m, ok := meanings[feature][level]; ok {
		return m
	}
	return "unknown level"
}

// release is the Kafka release of a metadata.version name: "4.4" of "4.4-IV2".
func release(name string) string {
	for i := range len(name) {
		if name[i] == '-' {
			return name[:i]
		}
	}
	return name
}

// PreviousRelease is the newest metadata.version level of the release
// before level's (4.3-IV0, 30, for 4.4-IV2, 33): the level a cluster must run
// for its software to go back one release. A level this table does not
// know: the level below it.
func PreviousRelease(level int16) int16 {
	name, ok := metadataVersions[level]
	if !ok {
		return level - 1
	}
	for l := level - 1; l > 0; l-- {
		if n, ok := metadataVersions[l]; ok && release(n) != release(name) {
			return l
		}
	}
	return level - 1
}
