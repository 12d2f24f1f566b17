package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ConnectIn is Connect with the connections' search_path set to schema, so
// that a program's unqualified table names are its own schema's (each
// service, and each test, has one of its own).
func ConnectIn(ctx context.Context, schema string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(DSN())
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", DSN(), err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", DSN(), err)
	}
	if err := p.Ping(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("PostgreSQL at %s does not answer (`make services-up S=postgres` at the root starts it): %w", DSN(), err)
	}
	return p, nil
}

// ResetSchema drops schema with everything in it, creates it again and runs
// ddl in it: a demo's run starts from empty tables.
func ResetSchema(ctx context.Context, p *pgxpool.Pool, schema string, ddl ...string) error {
	s := pgx.Identifier{schema}.Sanitize()
	tx, err := p.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it does nothing
	stmts := append([]string{"DROP SCHEMA IF EXISTS " + s + " CASCADE", "CREATE SCHEMA " + s,
		"SET LOCAL search_path TO " + s}, ddl...)
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("schema %s: %s: %w", schema, q, err)
		}
	}
	return tx.Commit(ctx)
}
