// Command plus_commit is PluS's plus_commit (seed 002 §2.3): see package
// gopbs/tools/internal/plus, function Commit.
package main

import "gopbs/tools/internal/plus"

func main() { plus.Main(plus.Commit) }
