// Package dbtest gives lecture 11's tests a PostgreSQL schema of their own.
package dbtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// Require skips the test when the course's PostgreSQL does not answer, and
// fails it under BREW_REQUIRE_REAL=1 (the real tier starts PostgreSQL).
func Require(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := db.Connect(ctx)
	if err == nil {
		p.Close()
		return
	}
	msg := fmt.Sprintf("needs PostgreSQL (%v): `scripts/brewstand services up postgres` starts it, `make test-real` runs the tests with it", err)
	if brewtest.RequireRealSet() {
		t.Fatal(msg + " [BREW_REQUIRE_REAL=1]")
	}
	t.Skip(msg)
}

var notWord = regexp.MustCompile(`[^a-z0-9_]+`)

// Schema returns a fresh schema name for the test (prefix and random
// digits), dropped with what it holds when the test ends. It calls Require.
func Schema(t testing.TB, prefix string) string {
	t.Helper()
	Require(t)
	name := fmt.Sprintf("t_%s_%06d", notWord.ReplaceAllString(strings.ToLower(prefix), "_"), rand.IntN(1_000_000))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p, err := db.Connect(ctx)
		if err != nil {
			return
		}
		defer p.Close()
		p.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE") //nolint:errcheck // best effort
	})
	return name
}
