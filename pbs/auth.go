package pbs

import (
	"gopbs/batchreq"
)

// DisconnectRequest returns a Disconnect request (header only).
func DisconnectRequest(user string) []byte {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, user, nil).Append(nil)
}
