package stand_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// releaseMentions are the ways a file names a Kafka release with its patch
// number: an image tag, a jar, the pom's property, "Kafka 4.4.0" in prose.
// A text that speaks of another release on purpose names it without the
// patch number ("on Kafka 4.2 ...").
var releaseMentions = regexp.MustCompile(`(?:apache/kafka:|kafka-standin:|kafka_2\.13-|kafka-tools-|<kafka\.version>|(?:^|[^\w-])[Kk]afka )(\d+\.\d+\.\d+)\b`)

// TestOneKafkaVersion holds every tracked file to stand.KafkaVersion, the
// one place that names the release the course runs: the compose file's
// default image, the pom's default, brewcontainers, the scripts, the READMEs.
func TestOneKafkaVersion(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to scan", err)
	}
	checked := 0
	for _, name := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		if string(name) == "stand/version_test.go" {
			continue // this file names other releases on purpose
		}
		path := filepath.Join(root, string(name))
		b, err := os.ReadFile(path)
		if err != nil || bytes.IndexByte(b, 0) >= 0 {
			continue // removed in the work tree, or binary
		}
		checked++
		for i, line := range bytes.Split(b, []byte("\n")) {
			for _, m := range releaseMentions.FindAllSubmatch(line, -1) {
				if string(m[1]) == stand.PreviousVersion && bytes.HasPrefix(name, []byte("lectures/15-operations/")) {
					continue // where lecture 15's rolling upgrade starts
				}
				if string(m[1]) != stand.KafkaVersion {
					t.Errorf("%s:%d names Kafka %s, the course runs %s (pkg/brewkit/stand/version.go): %s",
						name, i+1, m[1], stand.KafkaVersion, bytes.TrimSpace(line))
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("scanned only %d files: is the repository root %s?", checked, root)
	}
}

// TestReleaseMentionsAreFound keeps the scan honest: each way of naming a
// release is caught, and neither a release named without its patch nor
// another product's version (librdkafka) is.
func TestReleaseMentionsAreFound(t *testing.T) {
	for _, line := range []string{"image: apache/kafka:4.2.0", "brew/kafka-standin:4.3.1", "kafka_2.13-4.2.0.jar",
		"kafka-tools-4.2.0.jar", "<kafka.version>4.2.0</kafka.version>", "runs Kafka 4.2.0 jars", "real kafka 4.2.0", "Kafka 4.2.0 at the start"} {
		if !releaseMentions.MatchString(line) {
			t.Errorf("%q is not found by the scan", line)
		}
	}
	for _, line := range []string{"on Kafka 4.2 the start offset lagged", "librdkafka 2.11.1", "confluent-kafka 2.11.1"} {
		if releaseMentions.MatchString(line) {
			t.Errorf("%q is found by the scan", line)
		}
	}
}
