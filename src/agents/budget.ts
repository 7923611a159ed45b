/** The model layer's budgets, handed on: agents are held to them before every model call. */
export { Budget, BudgetExceeded, type BudgetLimits } from '../llm/index.js';
