# The API image: builds the TypeScript and serves GraphQL. Used by docker-compose.yml with a
# pgvector/pgvector server; without DATABASE_URL it runs on embedded PGlite in /data.
FROM node:20-bookworm-slim
WORKDIR /app
COPY .npmrc package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/data
EXPOSE 4000
CMD ["node", "bin/dhr.js", "serve", "--demo"]
