package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrFenced is the error of a round committed by a store whose fence
// token is no longer the database's: another server has claimed the
// database since (Claim), and nothing of the round was applied.
var ErrFenced = errors.New("pgstore: another server has taken over the database")

// Statements of the leader table (migration 2).
const (
	claimSQL = `INSERT INTO gopbs_leader (id, token, holder) VALUES (1, 1, $1)
		ON CONFLICT (id) DO UPDATE SET token = gopbs_leader.token + 1, holder = EXCLUDED.holder, since = now()
		RETURNING token`
	fenceSQL  = `SELECT token FROM gopbs_leader WHERE id = 1 FOR SHARE`
	leaderSQL = `SELECT token, holder, since FROM gopbs_leader WHERE id = 1`
)

// Claim makes holder the leader of the database at url and returns its
// token, to be given to Open as Options.Fence; the schema is created or
// upgraded first. Every round of a fenced store reads the token under a
// shared row lock and fails with ErrFenced if it has changed, and Claim's
// update waits for those locks: once Claim returns, each round of a
// previous leader has either committed (so it is visible to whatever the
// new leader reads next) or will fail. Callers hold the failover lock
// (package failover) while they claim, so that leaders follow each other
// rather than fight.
func Claim(ctx context.Context, url, holder string) (int64, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, fmt.Errorf("pgstore: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if err := migrateConn(ctx, conn, migrations); err != nil {
		return 0, err
	}
	var token int64
	if err := conn.QueryRow(ctx, claimSQL, holder).Scan(&token); err != nil {
		return 0, fmt.Errorf("pgstore: claim the database: %w", err)
	}
	return token, nil
}

// Leader describes the database's current leader.
type Leader struct {
	Token  int64
	Holder string // as given to Claim
	Since  time.Time
}

// CurrentLeader returns the leader recorded in the database (token 0
// when no server has claimed it).
func (s *Store) CurrentLeader(ctx context.Context) (Leader, error) {
	var l Leader
	err := s.pool.QueryRow(ctx, leaderSQL).Scan(&l.Token, &l.Holder, &l.Since)
	if errors.Is(err, pgx.ErrNoRows) {
		return Leader{}, nil
	}
	if err != nil {
		return Leader{}, fmt.Errorf("pgstore: read the leader: %w", err)
	}
	return l, nil
}

// checkFence reads the token queued first in a round's pipeline (see
// transact) and compares it with the store's.
func (s *Store) checkFence(br pgx.BatchResults) error {
	var token int64
	err := br.QueryRow().Scan(&token)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrFenced
	}
	if err != nil {
		return err
	}
	if token != s.fence {
		return ErrFenced
	}
	return nil
}

// Clear deletes every object of the store (pbs_server -t create), in a
// transaction of its own, fenced like the rounds. Call it before
// submitting batches: it does not wait for rounds under way.
func (s *Store) Clear(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if s.fence != 0 {
			var token int64
			if err := tx.QueryRow(ctx, fenceSQL).Scan(&token); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if token != s.fence {
				return ErrFenced
			}
		}
		_, err := tx.Exec(ctx, "DELETE FROM gopbs_objects")
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: clear: %w", err)
	}
	return nil
}
