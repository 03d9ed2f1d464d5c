"""The GPU queue: one benchmark run at a time per GPU of a machine, in arrival order, shared by
every user of it, with no daemon. ``tickets`` holds the queue folder's files (a ticket per waiting
run, a beat per holder, the admin's policy) and their rules; ``share`` takes a turn for a run
(waits, beats, hands over) and says who else uses the GPU. Below ``remote`` (a remote run queues
on its server through the agent) and above ``agent`` and ``devices``."""
