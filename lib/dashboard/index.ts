export { BabelQueueDashboardModule } from './babel-queue-dashboard.module.js';
export type { BabelQueueDashboardOptions } from './dashboard-options.js';
export type { DashboardQuery, TopicSummary } from './dashboard.service.js';
export type { DashboardSchedulesOptions } from './dashboard-schedules.js';
export type { DashboardAdminOptions, DashboardSubscriptions } from './dashboard-subscriptions.js';
export type { DashboardSubscription, SubscriptionRunState } from './subscription-rows.js';
