# The durable-compaction worker.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
ENV NODE_ENV=production
# Node runs the CLI itself (tsx as a loader, not the bin wrapper's child process), so `docker stop`'s
# SIGTERM reaches the worker and it stops gracefully. `up --cluster` starts its workers the same way.
CMD ["node", "--import", "tsx", "src/cli/main.ts", "worker"]
