module gopbs

go 1.26.0
