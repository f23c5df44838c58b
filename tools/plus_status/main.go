// Command plus_status is PluS's plus_status (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Status.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Status) }
