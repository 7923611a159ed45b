/**
 * The Connect adapters of the internal services (OrchestratorService, StreamingService,
 * SessionService): proto to domain mapping, caller authentication, error mapping.
 */
export { createOrchestratorService, createStreamingService, eventToUpdate } from './orchestrator.js';
export { createSessionService } from './session.js';
export { clientAuthInterceptor, serverAuthInterceptor, transportAs } from './auth.js';
