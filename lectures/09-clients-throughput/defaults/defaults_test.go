package defaults_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/defaults"
)

// What the libraries in go.mod do by default, as their code says.
func TestDefaultsOfTheLibrariesReadme(t *testing.T) {
	rows, err := defaults.Read()
	require.NoError(t, err)
	by := map[string]defaults.Row{}
	for _, r := range rows {
		by[r.Client] = r
	}
	require.Equal(t, "all", by["franz-go"].Acks)
	require.Equal(t, "on", by["franz-go"].Idempotent)
	require.Equal(t, "10ms", by["franz-go"].Linger)
	require.Equal(t, "1", by["sarama"].Acks)
	require.Equal(t, "off", by["sarama"].Idempotent)
	require.Equal(t, "3", by["sarama"].Retries)
	require.Equal(t, "0", by["kafka-go"].Acks, "kafka-go's zero Writer does not wait for any acknowledgement")
	require.Equal(t, "1s", by["kafka-go"].Linger)
	require.Equal(t, "100 messages", by["kafka-go"].Batch)
	var b strings.Builder
	defaults.Print(&b, rows)
	brewtest.MatchesReadme(t, "../README.md", "defaults", b.String())
}
