export { BabelQueueDashboardModule } from './babel-queue-dashboard.module.js';
export type { BabelQueueDashboardOptions } from './dashboard-options.js';
export type { DashboardQuery, TopicSummary } from './dashboard.service.js';
export type { DashboardSchedulesOptions } from './dashboard-schedules.js';
