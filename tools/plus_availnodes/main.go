// Command plus_availnodes is PluS's plus_availnodes (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function AvailNodes.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.AvailNodes) }
