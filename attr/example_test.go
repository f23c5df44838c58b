package attr_test

import (
	"fmt"

	"gopbs/attr"
)

// A job is built from the attribute list of a QueueJob request, completed
// with queue defaults and reported to its owner.
func Example() {
	job := attr.NewSet(attr.JobTable())
	for _, e := range []attr.Entry{
		{Name: "Job_Name", Value: "manyopts"},
		{Name: "Resource_List", Resource: "walltime", HasResource: true, Value: "00:05:00"},
		{Name: "Resource_List", Resource: "mem", HasResource: true, Value: "100MB"},
		{Name: "Hold_Types", Value: "n"},
		{Name: "Rerunable", Value: "n"},
	} {
		if err := job.Decode(e.Name, e.Resource, e.HasResource, e.Value); err != nil {
			fmt.Println("reject with code", attr.Code(err))
			return
		}
	}
	job.Put(attr.JobOwner, attr.StringValue("alice@vm"))
	job.Put(attr.JobState, attr.StateQueued.StateValue(false))

	queue := attr.NewSet(attr.QueueTable())
	_ = queue.ModifyText("resources_default", "nodes", "1", attr.OpSet)
	job.FillDefaults(attr.JobResourceList, queue, attr.QueueResourcesDefault)

	for _, e := range job.AppendJobStatus(nil, attr.AccessUser, true, 0) {
		if e.HasResource {
			fmt.Printf("%s.%s = %s\n", e.Name, e.Resource, e.Value)
		} else {
			fmt.Printf("%s = %s\n", e.Name, e.Value)
		}
	}

	err := job.Decode("Priority", "", false, "high")
	fmt.Println(err, attr.Code(err))
	// Output:
	// Job_Name = manyopts
	// Job_Owner = alice@vm
	// job_state = Q
	// Hold_Types = n
	// Rerunable = False
	// Resource_List.mem = 100mb
	// Resource_List.nodect = 1
	// Resource_List.nodes = 1
	// Resource_List.walltime = 00:05:00
	// attr: Priority: PBSE 15016: not a decimal integer: "high" 15016
}
