// Proves the code generated from proto/svc/v1 compiles and serves: both services run in memory
// behind createRouterTransport, so every call below crosses real (de)serialisation.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ExecutionMode, StatusCode, TaskStatus } from "../gen/svc/v1/common_pb.js";
import { OrchestratorService, SubmitTaskResponseSchema } from "../gen/svc/v1/orchestrator_pb.js";
import { StreamingService, TaskUpdateSchema, type TaskUpdate } from "../gen/svc/v1/streaming_pb.js";

const createdAt = new Date("2025-01-02T03:04:05.000Z");

const events: TaskUpdate[] = ["WORKFLOW_STARTED", "AGENT_THINKING", "WORKFLOW_COMPLETED"].map((type, i) =>
  create(TaskUpdateSchema, {
    workflowId: "wf-1",
    type,
    seq: BigInt(i + 1),
    streamId: `${i + 1}-0`,
    timestamp: timestampFromDate(createdAt),
    payload: { step: i + 1 },
  }),
);

const transport = createRouterTransport((router) => {
  router.service(OrchestratorService, {
    submitTask(req) {
      return create(SubmitTaskResponseSchema, {
        workflowId: `wf-${req.metadata?.taskId ?? ""}`,
        taskId: req.metadata?.taskId ?? "",
        status: StatusCode.OK,
        decomposition: { mode: req.options?.mode ?? ExecutionMode.UNSPECIFIED },
        message: `${req.query}|${String(req.context?.["role"])}|${req.options?.idempotencyKey ?? ""}`,
        createdAt: timestampFromDate(createdAt),
        sessionId: req.metadata?.sessionId ?? "",
      });
    },
  });
  router.service(StreamingService, {
    async *streamTaskExecution(req) {
      for (const ev of events) {
        if (ev.workflowId !== req.workflowId || ev.seq <= req.lastEventId) continue;
        if (req.types.length > 0 && !req.types.includes(ev.type)) continue;
        yield ev;
      }
    },
  });
});

describe("generated svc.v1 code", () => {
  it("serves SubmitTask, carrying Struct, map and extension fields across the wire", async () => {
    const client = createClient(OrchestratorService, transport);
    const res = await client.submitTask({
      metadata: { taskId: "t1", sessionId: "s1", labels: { env: "test" }, maxAgents: 5 },
      query: "hello",
      context: { role: "analyst", nested: { n: 1 } },
      options: { mode: ExecutionMode.COMPLEX, idempotencyKey: "idem-1", stream: true },
    });
    expect(res.workflowId).toBe("wf-t1");
    expect(res.taskId).toBe("t1");
    expect(res.status).toBe(StatusCode.OK);
    expect(res.decomposition?.mode).toBe(ExecutionMode.COMPLEX);
    expect(res.message).toBe("hello|analyst|idem-1");
    expect(res.sessionId).toBe("s1");
    expect(res.createdAt && timestampDate(res.createdAt).toISOString()).toBe(createdAt.toISOString());
  });

  it("streams StreamTaskExecution, honouring resume position and type filter", async () => {
    const client = createClient(StreamingService, transport);
    const got: TaskUpdate[] = [];
    for await (const ev of client.streamTaskExecution({ workflowId: "wf-1", lastEventId: 1n })) got.push(ev);
    expect(got.map((e) => [e.type, e.seq, e.streamId])).toEqual([
      ["AGENT_THINKING", 2n, "2-0"],
      ["WORKFLOW_COMPLETED", 3n, "3-0"],
    ]);
    expect(got[1]?.payload).toEqual({ step: 3 });

    const filtered: string[] = [];
    for await (const ev of client.streamTaskExecution({ workflowId: "wf-1", types: ["WORKFLOW_STARTED"] })) {
      filtered.push(ev.type);
    }
    expect(filtered).toEqual(["WORKFLOW_STARTED"]);
  });

  it("keeps the spec's enum numbering, with PAUSED appended", () => {
    expect([TaskStatus.UNSPECIFIED, TaskStatus.TIMEOUT, TaskStatus.PAUSED]).toEqual([0, 6, 7]);
  });
});
