// Package db connects lecture 11's programs to the course's PostgreSQL
// (the stand's postgres service, 127.0.0.1:15432) and creates the tables
// of order-service and kitchen-service.
package db

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvDSN overrides the database the programs use.
const EnvDSN = "BREW_POSTGRES_DSN"

// DefaultDSN is the stand's PostgreSQL (stand.PostgresDSN).
const DefaultDSN = "postgres://postgres@127.0.0.1:15432/postgres?sslmode=disable"

// DSN is the database to use: BREW_POSTGRES_DSN, else the stand's.
func DSN() string {
	if d := os.Getenv(EnvDSN); d != "" {
		return d
	}
	return DefaultDSN
}

// Connect opens a pool on DSN and checks that the database answers.
func Connect(ctx context.Context) (*pgxpool.Pool, error) {
	p, err := pgxpool.New(ctx, DSN())
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", DSN(), err)
	}
	if err := p.Ping(ctx); err != nil {
		p.Close()
		// pgx names each address it tried on a line of its own: one line here.
		return nil, fmt.Errorf("PostgreSQL at %s does not answer (`make services-up S=postgres` at the root starts it): %s",
			DSN(), strings.Join(strings.Fields(err.Error()), " "))
	}
	return p, nil
}
