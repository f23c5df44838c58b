package schedsim

import (
	"bufio"
	"fmt"
	"io"
)

// WriteSVG draws the node-time chart of a run between from and to
// (seconds; to <= from draws the whole run): one row per node, time to
// the right, a rectangle per job and node for the virtual processors it
// held, coloured by the job's size (red for the largest jobs) and outlined
// darker when the job had a reservation.
func WriteSVG(out io.Writer, r *Result, from, to int64) error {
	if to <= from {
		for _, j := range r.Jobs {
			to = max(to, j.End)
		}
	}
	span := float64(max(to-from, 1))
	const width, rowH, left, top = 1200.0, 6.0, 60.0, 30.0
	height := top + rowH*float64(r.Nodes) + 30
	bw := bufio.NewWriter(out)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", width+left+20, height)
	fmt.Fprintf(bw, `<text x="%.0f" y="18">%s: %d nodes x %d slots, %s to %s</text>`+"\n", left, r.Mode, r.Nodes, r.NP, hms(float64(from)), hms(float64(to)))
	fmt.Fprintf(bw, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="#f4f4f4" stroke="#888"/>`+"\n", left, top, width, rowH*float64(r.Nodes))
	total := r.Nodes * r.NP
	for _, j := range r.Jobs {
		if j.Start < 0 || j.End <= from || j.Start >= to {
			continue
		}
		x0 := left + width*float64(max(j.Start, from)-from)/span
		x1 := left + width*float64(min(j.End, to)-from)/span
		hue := 220 - int(220*float64(j.Procs)/float64(total))
		stroke := "none"
		if j.Planned >= 0 {
			stroke = "#222"
		}
		// one rectangle per node: its VPs of the job as a band of the row
		perNode := map[int][2]int{}
		for _, s := range j.Slots {
			b, ok := perNode[s.Node]
			if !ok {
				b = [2]int{s.VP, s.VP}
			}
			b[0], b[1] = min(b[0], s.VP), max(b[1], s.VP)
			perNode[s.Node] = b
		}
		for n, b := range perNode {
			y := top + rowH*float64(n) + rowH*float64(b[0])/float64(r.NP)
			h := rowH * float64(b[1]-b[0]+1) / float64(r.NP)
			fmt.Fprintf(bw, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="hsl(%d,70%%,55%%)" stroke="%s" stroke-width="0.3"/>`+"\n",
				x0, y, max(x1-x0, 0.2), h, hue, stroke)
		}
	}
	fmt.Fprintf(bw, `<text x="%.0f" y="%.0f">time &#8594; (node rows top to bottom; colour: job size, red = whole cluster; outlined: had a reservation)</text>`+"\n", left, height-8)
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}
