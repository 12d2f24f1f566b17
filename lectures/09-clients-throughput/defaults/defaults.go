// Package defaults reads what each Go client does when you set nothing,
// from the libraries' own default configuration: franz-go's option values,
// sarama's NewConfig, kafka-go's zero Writer as its Stats report it.
package defaults

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Row is one client's producer defaults.
type Row struct {
	Client      string `json:"client"`
	Acks        string `json:"acks"`
	Idempotent  string `json:"idempotence"`
	Linger      string `json:"linger"`
	Batch       string `json:"batch"`
	Compression string `json:"compression"`
	Retries     string `json:"retries"`
}

// Read builds the table from the libraries.
func Read() ([]Row, error) {
	cl, err := kgo.NewClient() // no connection is made until it is used
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	acks := cl.OptValue(kgo.RequiredAcks).(kgo.Acks)
	codecs := cl.OptValue(kgo.ProducerBatchCompression).([]kgo.CompressionCodec)
	var names []string
	for _, c := range codecs {
		names = append(names, codecName(c))
	}
	franz := Row{
		Client:      "franz-go",
		Acks:        map[kgo.Acks]string{kgo.AllISRAcks(): "all", kgo.LeaderAck(): "1", kgo.NoAck(): "0"}[acks],
		Idempotent:  onOff(!cl.OptValue(kgo.DisableIdempotentWrite).(bool)),
		Linger:      cl.OptValue(kgo.ProducerLinger).(time.Duration).String(),
		Batch:       fmt.Sprintf("%d B", cl.OptValue(kgo.ProducerBatchMaxBytes).(int32)),
		Compression: "first available of " + strings.Join(names, ", "),
		Retries:     retries(cl.OptValue(kgo.RecordRetries).(int64)),
	}

	sc := sarama.NewConfig()
	sar := Row{
		Client:      "sarama",
		Acks:        map[sarama.RequiredAcks]string{sarama.WaitForAll: "all", sarama.WaitForLocal: "1", sarama.NoResponse: "0"}[sc.Producer.RequiredAcks],
		Idempotent:  onOff(sc.Producer.Idempotent),
		Linger:      fmt.Sprintf("%s (Flush.Frequency; 0: flush at once)", sc.Producer.Flush.Frequency),
		Batch:       fmt.Sprintf("%d B max message", sc.Producer.MaxMessageBytes),
		Compression: sc.Producer.Compression.String(),
		Retries:     fmt.Sprint(sc.Producer.Retry.Max),
	}

	st := (&kafka.Writer{}).Stats()
	kg := Row{
		Client:      "kafka-go",
		Acks:        fmt.Sprint(st.RequiredAcks),
		Idempotent:  "not supported",
		Linger:      st.BatchTimeout.String(),
		Batch:       fmt.Sprintf("%d messages", st.MaxBatchSize),
		Compression: "none",
		Retries:     fmt.Sprintf("%d attempts", st.MaxAttempts),
	}
	return []Row{franz, sar, kg}, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func retries(n int64) string {
	if n > 1<<40 {
		return "unlimited (until the delivery timeout, none by default)"
	}
	return fmt.Sprint(n)
}

func codecName(c kgo.CompressionCodec) string {
	for _, n := range []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"none", kgo.NoCompression()}, {"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()}, {"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()}} {
		if n.codec == c {
			return n.name
		}
	}
	return "?"
}

// Print writes the table.
func Print(w io.Writer, rows []Row) {
	t := brewkit.NewTable(w, "CLIENT", "ACKS", "IDEMPOTENCE", "LINGER", "BATCH", "COMPRESSION", "RETRIES")
	for _, r := range rows {
		t.Row(r.Client, r.Acks, r.Idempotent, r.Linger, r.Batch, r.Compression, r.Retries)
	}
	t.Flush()
}
