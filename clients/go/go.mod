module retryd/clients/go

go 1.19
