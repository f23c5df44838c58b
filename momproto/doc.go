// Package momproto holds the bodies of the protocols pbs_mom speaks besides
// the batch protocol: IS (MOM ↔ server node status), RM (resource monitor
// queries from momctl and the scheduler), IM (MOM ↔ MOM, multi-node jobs)
// and TM (job tasks ↔ their MOM).
//
// IS, RM and IM messages travel over RPP, which delimits messages, so their
// lists end where the message ends and the Decode functions take a whole
// message. TM travels over TCP without framing; its Decode functions take
// the bytes of a stream and report how many they consumed.
//
// Every message keeps what it decoded (including the protocol version it
// carried), so encoding a decoded message with Append reproduces the
// original bytes exactly. Decoders never panic; they return a
// *DecodeError carrying the offset of the item that could not be decoded.
//
// Constants keep the names of the protocol (IS_STATUS, RM_CMD_REQUEST,
// IM_JOIN_JOB, TM_SPAWN, ...).
package momproto
