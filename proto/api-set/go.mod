module xdsd/proto/api-set

go 1.19
