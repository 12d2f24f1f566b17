package brewkit

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	cfg, err := configFrom(env(nil))
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:19092", "127.0.0.1:19093", "127.0.0.1:19094"}, cfg.Brokers)
	require.Equal(t, DefaultBootstrap, cfg.Bootstrap())
	require.Len(t, cfg.Opts(), 1, "seeds only: no SASL, no TLS")

	cfg, err = configFrom(env(map[string]string{
		EnvBootstrap: " a:9092, b:9093 ,", EnvSASL: "scram-sha-512", EnvUser: "u", EnvPassword: "p", EnvTLS: "1",
	}))
	require.NoError(t, err)
	require.Equal(t, []string{"a:9092", "b:9093"}, cfg.Brokers)
	require.Equal(t, "SCRAM-SHA-512", cfg.SASL)
	require.True(t, cfg.TLS)
	require.Len(t, cfg.Opts(), 3, "seeds, SASL, TLS")
	require.Equal(t, defaultTimeout, cfg.Bound())

	cfg, err = configFrom(env(map[string]string{EnvTimeout: "2s"}))
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, cfg.Bound())

	for _, bad := range []map[string]string{
		{EnvBootstrap: "no-port"},
		{EnvBootstrap: ","},
		{EnvBootstrap: "foo:"},
		{EnvBootstrap: ":9092"},
		{EnvBootstrap: "foo:99999"},
		{EnvTimeout: "0s"},
		{EnvTimeout: "soon"},
		{EnvSASL: "GSSAPI", EnvUser: "u"},
		{EnvSASL: "PLAIN"},
		{EnvTLS: "maybe"},
	} {
		_, err := configFrom(env(bad))
		require.Error(t, err, "%v", bad)
	}
}

func TestPingFailsFastWithOneUsefulLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // now nothing listens there

	cfg := Config{Brokers: []string{addr}}
	cl, err := NewClient(cfg)
	require.NoError(t, err)
	defer cl.Close()
	start := time.Now()
	err = Ping(context.Background(), cfg, cl)
	var ue *unreachableError
	require.True(t, errors.As(err, &ue), "got %v", err)
	require.Less(t, time.Since(start), 5*time.Second)
	msg := err.Error()
	require.NotContains(t, msg, "\n")
	require.Contains(t, msg, addr)
	require.Contains(t, msg, "make up")
	require.Contains(t, msg, "connection refused")
}

func TestTableAligns(t *testing.T) {
	var b bytes.Buffer
	tb := NewTable(&b, "NODE", "HOST", "ROLE")
	tb.Row(1, "127.0.0.1", "broker + voter")
	tb.Row(12, "h", "x")
	require.NoError(t, tb.Flush())
	require.Equal(t, "NODE  HOST       ROLE\n1     127.0.0.1  broker + voter\n12    h          x\n", b.String())
}

func TestLivePipedPrintsChangesOnly(t *testing.T) {
	var b bytes.Buffer
	l := NewLive(&b)
	l.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	l.Frame("leader 1\n")
	l.Frame("leader 1\n")
	l.Frame("leader 2\n")
	require.Equal(t, "--- 03:04:05\nleader 1\n--- 03:04:05\nleader 2\n", b.String())
	require.False(t, strings.Contains(b.String(), "\x1b["), "no escape codes when piped")
}

// A host that does not resolve is a KAFKA_BOOTSTRAP to check, not a stand to
// start.
func TestUnresolvableHostSaysCheckTheBootstrap(t *testing.T) {
	dns := &net.DNSError{Err: "no such host", Name: "kafka.example.invalid", IsNotFound: true}
	err := &unreachableError{Bootstrap: "kafka.example.invalid:9092", Err: &net.OpError{Op: "dial", Net: "tcp", Err: dns}}
	require.Equal(t, "no Kafka answers at kafka.example.invalid:9092: host kafka.example.invalid does not resolve (no such host): check KAFKA_BOOTSTRAP", err.Error())
}
