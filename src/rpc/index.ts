/**
 * The Connect adapters of the internal services (OrchestratorService, StreamingService,
 * SessionService): proto to domain mapping, caller authentication, error mapping.
 * Also AgentService (./agent.ts, on its own port, AGENT_GRPC_PORT) and LLMService (./llm.ts,
 * on the orchestrator's port).
 */
export { createOrchestratorService, createStreamingService, eventToUpdate } from './orchestrator.js';
export { createSessionService } from './session.js';
export { clientAuthInterceptor, serverAuthInterceptor, transportAs } from './auth.js';
export { createAgentService, type AgentServiceDeps } from './agent.js';
export { createLlmService, type LlmServiceDeps } from './llm.js';
