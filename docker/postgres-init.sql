-- Temporal's own role and databases, beside the project's database (created by POSTGRES_DB).
create role temporal login password 'temporal' createdb;
create database temporal owner temporal;
create database temporal_visibility owner temporal;
