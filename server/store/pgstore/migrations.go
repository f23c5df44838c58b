package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions: migrations[i] takes the schema
// from version i to version i+1. Published entries are never changed;
// a new version is a new entry at the end.
var migrations = []string{
	// 1: the objects of the store's buckets, keys compared as bytes
	// (ForEach returns them in the embedded store's order).
	`CREATE TABLE gopbs_objects (
		bucket text NOT NULL,
		key    bytea NOT NULL,
		value  bytea NOT NULL,
		PRIMARY KEY (bucket, key)
	)`,
	// 2: the leadership token of failover (fence.go): one row, whose
	// token each server taking over increments and whose every commit
	// round checks.
	`CREATE TABLE gopbs_leader (
		id     integer PRIMARY KEY CHECK (id = 1),
		token  bigint NOT NULL,
		holder text NOT NULL,
		since  timestamptz NOT NULL DEFAULT now()
	)`,
}

// migrationLock is the advisory lock key under which the schema is
// migrated ("GoPBS" in ASCII).
const migrationLock = 0x476f504253

// schemaTable records the schema version, one row per applied migration.
const schemaTable = `CREATE TABLE IF NOT EXISTS gopbs_schema (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// migrate brings the schema to len(steps), each missing step in a
// transaction of its own, all under the advisory lock. It refuses a
// schema newer than steps.
func migrate(ctx context.Context, pool *pgxpool.Pool, steps []string) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: connect: %w", err)
	}
	defer conn.Release()
	return migrateConn(ctx, conn.Conn(), steps)
}

// migrateConn is migrate on one connection.
func migrateConn(ctx context.Context, conn *pgx.Conn, steps []string) error {
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLock)); err != nil {
		return fmt.Errorf("pgstore: lock the schema: %w", err)
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", int64(migrationLock))
	if _, err := conn.Exec(ctx, schemaTable); err != nil {
		return fmt.Errorf("pgstore: create gopbs_schema: %w", err)
	}
	var version int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM gopbs_schema").Scan(&version); err != nil {
		return fmt.Errorf("pgstore: read the schema version: %w", err)
	}
	if version > len(steps) {
		return fmt.Errorf("pgstore: the database's schema is version %d, newer than this pbs_server knows (%d)", version, len(steps))
	}
	for v := version; v < len(steps); v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, steps[v]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO gopbs_schema (version) VALUES ($1)", v+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("pgstore: migrate the schema to version %d: %w", v+1, err)
		}
	}
	return nil
}

// SchemaVersion is the schema version this package creates.
func SchemaVersion() int { return len(migrations) }
