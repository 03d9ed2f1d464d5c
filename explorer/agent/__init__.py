"""The agent: one worker program, one protocol, one way to run a child process.

Work that may crash, hang or must run with a different environment (a benchmark point, a kernel
under numba's CUDA simulator, the launch visualizer's real run) runs in an *agent*, a child
process started as ``device-explorer agent`` (``python -m explorer agent``; in the bundle, the
bundle's executable with ``agent``). The same agent runs on another machine through
``ssh DEST PYTHON -m explorer agent``, or on a cluster through ``ssh DEST PYTHON -m explorer
launcher-guard --job-name NAME -- srun ... PYTHON -m explorer agent`` (``explorer.remote.target``;
the guard reports the Slurm job's state and cancels it when the client goes): only the argv
differs.

Modules (transport only: this package never imports the domain packages above it, ``bench``,
``launch``, ``remote`` and the rest; ``import-linter`` in CI holds it to that)
  ``protocol``  the messages, their encoding and validation (both sides)
  ``serve``     the agent's loop (the child side); it serves the ``Methods`` it is handed
  ``child``     ``AgentProcess``: start a child from an argv, greet it, send requests, stop it

What an agent can be asked to do lives with the commands: ``explorer.commands.agent`` (the
hidden ``agent`` sub-command) hands its ``METHODS`` to ``serve.run_agent``.

The protocol (version ``protocol.PROTOCOL_VERSION``)
  Transport: the child's stdin (parent -> agent) and stdout (agent -> parent), one JSON object per
  line, UTF-8, at most ``MAX_LINE_BYTES`` a line. The agent's stderr is free text; the parent keeps
  its tail for error messages. Nothing else may write to the agent's stdout (the agent points fd 1
  at stderr and keeps a private copy for the protocol).

  1. The agent starts and sends ``{"type":"hello","protocol":2,"package":"device-explorer",
     "version":"0.1.0","python":"3.11.9","pid":4242,"platform":"linux","build":"14f06584383e5a32",
     "started":{"argv":[...],"forced":false,"guard":null},"heartbeat_s":20}`` before anything heavy
     is imported (``build``: ``explorer.agent.build``; ``started``: how it was started, so a parent
     that asked for a launcher can tell an sshd ForceCommand ran it instead). The parent waits
     ``child.HELLO_TIMEOUT_S`` for it; up to ``child.MAX_NOISE_LINES`` non-JSON lines before it are
     tolerated (login scripts over ssh). Protocol and package version must both equal the
     parent's (and, for a remote agent, the build); otherwise the parent stops the agent and says,
     in one line, which version to install there (``pip install device-explorer==X``).
  2. The parent sends ``{"type":"request","id":N,"method":"bench.point","params":{...}}``, one at a
     time, ids increasing from 1.
  3. The agent answers with zero or more ``{"type":"event","id":N,"data":{...}}`` (streamed parts,
     e.g. progress), then exactly one ``{"type":"result","id":N,"data":{...}}`` or
     ``{"type":"error","id":N,"kind":K,"message":"one line"}`` with K one of ``bad-request`` (the
     request was malformed; id 0 when it could not be read), ``unknown-method``, ``failed`` (the
     method raised). After an error the agent goes on serving.
  4. An event with id 0 answers no request: a launcher guard between ssh and ``srun``
     (``explorer.remote.jobguard``) reports its Slurm job's state this way,
     ``{"type":"event","id":0,"data":{"launcher":{"job":"12","state":"PENDING","reason":"Resources",...}}}``,
     before the hello too; the parent hands it to ``AgentProcess.on_unsolicited``.
  5. ``{"type":"bye"}`` ends the agent after the current request; closing its stdin ends it at
     once, even mid-request (this is also what ends a remote agent when ssh drops).
  6. ``{"type":"beat"}``, sent by a remote parent every ``child.BEAT_EVERY_S`` whatever else it
     does, is never answered; an agent that has had one and then hears nothing for its
     ``heartbeat_s`` ends (a frozen laptop's connection stays open and silent), and so does a
     launcher guard, cancelling its job.

  Methods (``explorer.commands.agent.METHODS``): ``ping``; ``bench.prepare`` {preload, low_priority};
  ``bench.point`` {``explorer.bench.spec.PointSpec.to_dict()``} -> {point, fatal};
  ``gpu.lock`` {device, workload} -> {key, waited_s} (a GPU's turn, ``explorer.gpuqueue.share``);
  ``bench.roof`` {device} -> {roof} (the roof that worker placed the device's points under);
  ``roofs.measure`` {device} -> events {progress, message}, then {roof, message};
  ``selftest.simulator`` {} -> the simulator check's result; and ``realrun.run``,
  ``devices.list``, ``devices.live``, ``selftest.run`` (see ``explorer.commands.agent``). A request does only what
  the app needs, whoever sends it (an agent may be reached through a ``ForceCommand`` account):
  ``preload`` names only modules a workload needs, and ``realrun.run`` writes only into the empty
  private temporary file a local parent made (a remote parent asks for the result inline).

  Errors the parent raises (all ``protocol.AgentError``, each one line): ``AgentTimeout`` (no hello
  or no answer in time), ``AgentGone`` (the child ended; ``how`` says how, e.g. "crashed (SIGSEGV)"),
  ``AgentCancelled`` (``cancel()`` stopped it), ``AgentMismatch`` (version), ``ProtocolError`` (a
  line that is not a valid message, an answer to another request), ``AgentFailed`` (the method
  failed; the agent is still usable). After any but the last, the child has been killed.

  Version rule: any change to a message's shape, a method's params or its answer bumps
  ``PROTOCOL_VERSION``; the package version is compared too, because a benchmark point's fields
  are defined by the package.

Lifetime: see ``child`` (own session, group kill, timeouts) and ``serve`` (parent-death signal,
exit at end of stdin, SIGINT ignored).
"""
