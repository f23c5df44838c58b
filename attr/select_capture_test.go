package attr_test

import (
	"testing"

	"gopbs/attr"
	"gopbs/batchreq"
)

// TestCaptureSelectCriteria decodes the criteria of every SelectJobs and
// SelStat request in the captures with the attribute's (or resource's)
// type, and checks the SELEQ rule the server applies.
func TestCaptureSelectCriteria(t *testing.T) {
	n := 0
	tab := attr.JobTable()
	for _, x := range captureExchanges(t) {
		b, ok := x.req.Body.(*batchreq.Select)
		if !ok {
			continue
		}
		for _, a := range b.Attrs {
			d, ok := tab.Lookup(a.Name)
			if !ok {
				// qselect selects the destination queue by the
				// pseudo-attribute "destination" (spec 02 verified
				// discrepancy 10).
				if a.Name != "destination" {
					t.Errorf("%s: unknown select attribute %q", x.where, a.Name)
				}
				continue
			}
			typ := d.Type
			if typ == attr.TypeResourceList {
				rd, ok := tab.Resources().Lookup(a.Resource)
				if !ok {
					t.Errorf("%s: unknown resource %s", x.where, a.FullName())
					continue
				}
				typ = rd.Type
			}
			if _, err := attr.Parse(typ, a.Value); err != nil {
				t.Errorf("%s: %s %q: %v", x.where, a.FullName(), a.Value, err)
			}
			if !d.SelectOpAllowed(attr.Op(a.Op)) && x.rep != nil && x.rep.Code == 0 {
				t.Errorf("%s: %s op %d accepted by the server but refused by SELEQ", x.where, a.FullName(), a.Op)
			}
			n++
		}
	}
	if n == 0 {
		t.Skip("no select criteria in the captures")
	}
}
