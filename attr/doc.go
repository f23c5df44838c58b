// Package attr is the attribute model of TORQUE 2.5.13 (spec 04): value
// types with their exact text forms, the attribute definition tables of
// jobs, queues, the server and nodes, the resource definitions, and a
// compact container for the attribute values of one object.
//
// # Values
//
// A Value is a small immutable decoded value of one Type (long, boolean,
// char, string, string array/ACL, size, time, hold, depend, node state,
// ...). Parse decodes the wire/text form with TORQUE's acceptance rules and
// returns an *Error carrying the PBSE_* code the server must reply with
// (PBSE_BADATVAL 15016 for malformed values); an empty text means "unset".
// Value.Encode produces the exact text the server sends: "01:00:00" for
// times, "100mb" for sizes (never normalised), "True"/"False" for booleans,
// escaped comma lists for string arrays (newline-terminated elements in
// ModeSave). Combine implements the batch operations SET, UNSET, INCR
// (and INCR_OLD), DECR; Compare and Matches implement Select relations and
// resource limit checks. ParseSize, ParseTime, ParseHold, ParseNodeState,
// ParseDepend and ParseNodeSpec expose the structured forms.
//
// # Definitions
//
// JobTable, QueueTable, ServerTable and NodeTable return the definitions
// in definition order, which is the order of full status replies. Each Def
// carries its name, type, read/write permissions (Perm, checked against
// the requester's Access), behaviour flags (CREATE, ALTRUN, SELEQ, PRIVR,
// MOM, SvRD), queue kind, ACL kind and defaults. Lookup by name is O(1)
// and case-insensitive. The exported constants JobName, JobOwner, ...,
// QueueType, ..., SrvState, ..., NodeStateAttr, ... are definition
// numbers. DefaultResources is the resource table (Resources.WithExtra
// adds the server's extra_resc names; Table.WithResources uses it).
//
// # Sets
//
// A Set holds one object's values: a presence bit mask, the set values in
// definition order, the resources of all resource-list attributes (kept in
// alphabetical order of resource name, as TORQUE reports them) and, for
// jobs, unknown attributes kept verbatim. Get/Put/Unset work by definition
// number; Resource/PutResource/Resources by resource; Decode and
// ModifyText by name and text, with the operations above. Setting
// Resource_List.nodes or procs of a job updates nodect, neednodes and
// procct. AppendEntries/Status produce the reply entry list in exactly
// TORQUE's order with read permissions, PRIVR and empty-value omission
// applied; AppendAttr serves status requests that name attributes.
// AppendJobStatus adds the Walltime.Remaining pseudo-attribute after
// start_time; AppendMOM builds the QueueJob list sent to a MOM (entries
// flagged FlagDefault go with op DFLT); AppendSave lists the records of a
// persistence file. FillDefaults/RemoveDefaults apply resources_default,
// ExceedsMax and ExceedsLimit check resources_max/min, AddSummed keeps
// resources_assigned. Load rebuilds a set from stored or reported text
// without side effects.
//
// # Other helpers
//
// JobStateNum, Substate and StateCount cover job states (spec 04 §4);
// MatchUser, MatchHost and MatchGroup implement ACL matching
// (MatchUserEntry and MatchHostEntry for one decoded entry);
// ParseResourceRequests splits a qsub/qalter -l list. SplitArray and
// JoinArray decode and encode string-array text, Perm.Readable and
// Perm.Writable evaluate permission bits without a Def, and
// DependType.Mirror names the type recorded on the other job of a
// dependency registration: pbs_server keeps attribute values as their
// canonical text and uses these, and its definition tables are built from
// this package's.
//
// The package has no networking and does not import batchreq: the few
// PBSE numbers it needs are duplicated as unexported constants, and
// Entry mirrors batchreq.Attr.
package attr
