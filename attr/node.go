package attr

// Node attribute numbers: positions in NodeTable (spec 04 §8).
const (
	NodeStateAttr  = iota // state
	NodeNP                // np
	NodeProperties        // properties
	NodeNType             // ntype
	NodeJobs              // jobs
	NodeStatus            // status
	NodeNote              // note
	NodeGPUs              // gpus
	NodeGPUStatus         // gpu_status
	NodePartition         // partition (seed 003)
	NodeQueue             // queue: the one queue whose jobs the node runs (seed 003)
	numNodeAttrs
)

func nodeDefs() []Def {
	return []Def{
		NodeStateAttr:  {Name: "state", Type: TypeNodeState, Perm: perm("UOM", "OM"), Flags: FlagAlwaysRep, Default: "free"},
		NodeNP:         {Name: "np", Type: TypeLong, Perm: perm("UOM", "OM"), Flags: FlagAlwaysRep, Default: "1"},
		NodeProperties: {Name: "properties", Type: TypeStringArray, Perm: perm("UOM", "M")},
		NodeNType:      {Name: "ntype", Type: TypeNodeType, Perm: perm("UOM", "OM"), Flags: FlagAlwaysRep, Default: "cluster"},
		NodeJobs:       {Name: "jobs", Type: TypeString, Perm: perm("UOM", "-")},
		NodeStatus:     {Name: "status", Type: TypeStringArray, Perm: perm("UOM", "M")},
		NodeNote:       {Name: "note", Type: TypeString, Perm: perm("UOM", "OM")},
		NodeGPUs:       {Name: "gpus", Type: TypeLong, Perm: perm("UOM", "OM"), Flags: FlagAlwaysRep, Default: "0"},
		NodeGPUStatus:  {Name: "gpu_status", Type: TypeStringArray, Perm: perm("UOM", "M")},
		NodePartition:  {Name: "partition", Type: TypeString, Perm: perm("UOM", "M")},
		NodeQueue:      {Name: "queue", Type: TypeString, Perm: perm("UOM", "M")},
	}
}
